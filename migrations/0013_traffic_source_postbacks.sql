-- Traffic-source postbacks (docs/traffic-source-postbacks.md): server-to-server calls back to the
-- network that sent a click, when a conversion of that click is recorded.

-- The click parameter that carries the source's own click id (`cid`, `clickid`, `zoneid`...), and
-- the postback settings: { url, conversionTypes, payoutShare, enabled }, null for none.
alter table traffic_sources add column click_id_param text;
alter table traffic_sources add column postback jsonb;

-- The value of the source's click parameter as the click carried it (no default: metadata only).
alter table clicks add column source_click_id text;

-- One postback per conversion of a click that carried the source's click id, written in the
-- conversion's own transaction: the row is the postback's source of truth and the queue workers
-- claim. The conversion's values are fixed here; each attempt renders the source's current URL.
create table source_postbacks (
  id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  traffic_source_id bigint not null references traffic_sources (id) on delete cascade,
  conversion_id text not null,
  click_id text,
  conversion_type text not null,
  -- The conversion as the placeholders see it (the outgoing-webhook snapshot).
  snapshot jsonb not null,
  -- The source's click id and the payout (value x payoutShare / 100), fixed when queued.
  external_id text not null,
  payout numeric,
  status text not null check (status in ('Queued', 'Retrying', 'Delivered', 'Failed', 'Cancelled', 'Paused')),
  attempts integer not null default 0,
  last_attempt_at timestamptz,
  next_attempt_at timestamptz,
  -- A worker's claim, as on webhook_events: only the holder of the current token records the outcome.
  lease_until timestamptz,
  lease_token text,
  created_at timestamptz not null
);
create index source_postbacks_due on source_postbacks (next_attempt_at) where status in ('Queued', 'Retrying');
create index source_postbacks_list on source_postbacks (tenant_id, traffic_source_id, created_at desc, id desc);
create index source_postbacks_conversion on source_postbacks (conversion_id);
create index source_postbacks_source_paused on source_postbacks (traffic_source_id) where status = 'Paused';

-- One row per attempt: the URL template, never the resolved URL (it may hold a receiver key).
create table source_postback_attempts (
  id text primary key,
  postback_id text not null references source_postbacks (id) on delete cascade,
  tenant_id text not null,
  attempt integer not null,
  at timestamptz not null,
  url_template text not null,
  method text not null,
  request jsonb not null,
  response jsonb,
  duration_ms integer not null,
  error_type text,
  error text
);
create index source_postback_attempts_postback on source_postback_attempts (postback_id, attempt);
