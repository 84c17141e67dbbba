-- Google Ads offline conversions through the Data Manager API (docs/google-ads.md).
--
-- One integration per traffic source. The OAuth client secret and refresh token are kept sealed
-- (AES-256-GCM, a key derived from JWT_SECRET) in `sealed_secrets`: they must be read back to
-- ask Google for access tokens, so they cannot be hashed; no answer ever shows them again.
create table google_ads_integrations (
  traffic_source_id bigint primary key references traffic_sources (id) on delete cascade,
  tenant_id text not null references tenants (id) on delete cascade,
  account_id text not null check (account_id ~ '^[0-9]{1,20}$'),
  login_account_id text check (login_account_id ~ '^[0-9]{1,20}$'),
  client_id text not null,
  sealed_secrets text not null,
  -- { "<conversion type>": "<conversion action id>" }
  conversion_actions jsonb not null,
  consent jsonb,
  enabled boolean not null,
  -- Failed attempts in a row; at GOOGLE_ADS_FAILURE_ISSUE_AFTER the account issue opens.
  consecutive_failures integer not null default 0,
  -- One uploader at a time per integration, across nodes (a lease, not a lock held open).
  locked_until timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index google_ads_integrations_tenant on google_ads_integrations (tenant_id, traffic_source_id);

-- One row per events:ingest batch: its events, Google's answer and, while it fails, its next try.
create table google_ads_uploads (
  id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  traffic_source_id bigint not null references google_ads_integrations (traffic_source_id) on delete cascade,
  status text not null check (status in ('Sent', 'Partly', 'Failed', 'Retrying')),
  events integer not null,
  accepted integer not null default 0,
  refused integer not null default 0,
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  response jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index google_ads_uploads_list on google_ads_uploads (tenant_id, traffic_source_id, created_at desc, id desc);
create index google_ads_uploads_due on google_ads_uploads (traffic_source_id, next_attempt_at) where status = 'Retrying';

-- One row per conversion to upload, queued in the conversion's own transaction. `upload_id` is
-- null until a batch takes it; `outcome` is what Google (or our own check before sending) said.
create table google_ads_items (
  conversion_id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  traffic_source_id bigint not null references google_ads_integrations (traffic_source_id) on delete cascade,
  upload_id text references google_ads_uploads (id) on delete cascade,
  conversion_type text not null,
  gclid text not null,
  click_at timestamptz not null,
  occurred_at timestamptz not null,
  value numeric(20, 4),
  currency text,
  outcome text not null default 'pending' check (outcome in ('pending', 'accepted', 'refused')),
  reason text,
  created_at timestamptz not null
);
create index google_ads_items_queued on google_ads_items (traffic_source_id, created_at, conversion_id)
  where upload_id is null;
create index google_ads_items_upload on google_ads_items (upload_id, conversion_id);
