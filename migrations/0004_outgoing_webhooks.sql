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
