-- Outgoing conversion webhooks: the settings of each receiver.
create table outgoing_webhooks (
  id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  name text not null,
  url text not null,
  method text not null check (method in ('GET', 'POST')),
  -- Null: affiliate-level (every conversion of the tenant); else only that source's conversions.
  traffic_source_id bigint references traffic_sources (id) on delete cascade,
  -- Empty: every eligible type.
  conversion_types text[] not null default '{}',
  -- Conversion type -> the event name this receiver wants instead.
  event_names jsonb not null default '{}',
  -- Empty: every attribution source.
  attribution_sources text[] not null default '{}',
  status text not null default 'Enabled' check (status in ('Enabled', 'Disabled', 'Suspended')),
  status_reason text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index outgoing_webhooks_tenant on outgoing_webhooks (tenant_id, traffic_source_id, created_at);

-- One delivery event per conversion and matching webhook, written in the conversion's own
-- transaction: the row is the source of truth of the postback and the queue workers claim.
create table webhook_events (
  id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  webhook_id text not null references outgoing_webhooks (id) on delete cascade,
  conversion_id text,
  click_id text,
  conversion_type text not null,
  -- The conversion as the placeholders and the POST payload see it, fixed when it was recorded.
  snapshot jsonb not null,
  status text not null check (status in ('Queued', 'Retrying', 'Delivered', 'Failed', 'Cancelled', 'Held', 'Paused')),
  attempts integer not null default 0,
  last_attempt_at timestamptz,
  next_attempt_at timestamptz,
  -- A worker's claim: another may take the event once the lease has run out (a crashed worker),
  -- and only the holder of the current token may record the outcome.
  lease_until timestamptz,
  lease_token text,
  simulated boolean not null default false,
  created_at timestamptz not null
);
create index webhook_events_due on webhook_events (next_attempt_at) where status in ('Queued', 'Retrying');
create index webhook_events_list on webhook_events (tenant_id, created_at desc, id desc);
create index webhook_events_webhook on webhook_events (webhook_id, created_at desc);
create index webhook_events_conversion on webhook_events (conversion_id) where conversion_id is not null;

-- One row per attempt: the URL template (never the resolved URL, which may hold a receiver key).
create table webhook_attempts (
  id text primary key,
  event_id text not null references webhook_events (id) on delete cascade,
  tenant_id text not null,
  attempt integer not null,
  at timestamptz not null,
  url_template text not null,
  method text not null,
  request jsonb not null,
  response jsonb,
  duration_ms integer not null,
  error_type text check (error_type in ('timeout', 'connection_refused', 'dns', 'tls', 'http_status', 'invalid_url', 'blocked_address')),
  error text
);
create index webhook_attempts_event on webhook_attempts (event_id, attempt);
