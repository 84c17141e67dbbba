-- Operational webhooks: the receivers a tenant registers, the signed messages sent to them and
-- every attempt to deliver one.

create table notification_webhooks (
  id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  url text not null,
  description text,
  -- Empty: every event type.
  event_types text[] not null default '{}',
  -- Signing secrets (`whsec_...`), encrypted at rest (AES-256-GCM); never returned after creation
  -- or rotation. The previous secret keeps signing alongside the new one until it lapses.
  secret_enc text not null,
  previous_secret_enc text,
  previous_secret_until timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index notification_webhooks_tenant on notification_webhooks (tenant_id, created_at, id);

-- One message per event and matching webhook, written in the transaction of the state change
-- that caused it: the row is both the queue workers claim and the delivery history. Its id is
-- the `webhook-id` header, the same on every retry.
create table notification_messages (
  id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  webhook_id text not null references notification_webhooks (id) on delete cascade,
  type text not null,
  -- The exact JSON sent and signed, kept as text so it is never re-serialized.
  body text not null,
  status text not null check (status in ('Queued', 'Retrying', 'Delivered', 'Failed')),
  attempts integer not null default 0,
  last_attempt_at timestamptz,
  next_attempt_at timestamptz,
  -- A worker's claim: another may take the message once the lease has run out (a crashed
  -- worker), and only the holder of the current token may record the outcome.
  lease_until timestamptz,
  lease_token text,
  created_at timestamptz not null
);
create index notification_messages_due on notification_messages (next_attempt_at) where status in ('Queued', 'Retrying');
create index notification_messages_webhook on notification_messages (webhook_id, created_at desc, id desc);

create table notification_attempts (
  id text primary key,
  message_id text not null references notification_messages (id) on delete cascade,
  tenant_id text not null,
  attempt integer not null,
  at timestamptz not null,
  response_status integer,
  -- The receiver's answer, truncated to 4 KB.
  response_body text,
  duration_ms integer not null,
  error_type text check (error_type in ('timeout', 'connection_refused', 'dns', 'tls', 'http_status', 'invalid_url', 'blocked_address', 'secret_unreadable')),
  error text
);
create index notification_attempts_message on notification_attempts (message_id, attempt);
