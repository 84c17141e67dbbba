-- Account issues, the mail outbox and API usage metering.

-- One row per kind and subject: a recurring problem reopens its row instead of adding one.
create table account_issues (
  id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  kind text not null,
  severity text not null check (severity in ('warning', 'error', 'critical')),
  status text not null check (status in ('open', 'closed')),
  title text not null,
  subject_type text not null,
  subject_id text not null,
  subject_name text not null,
  details jsonb not null default '{}',
  opened_at timestamptz not null,
  updated_at timestamptz not null,
  closed_at timestamptz,
  unique (tenant_id, kind, subject_type, subject_id)
);
create index account_issues_list on account_issues (tenant_id, status, updated_at desc, id desc);

-- Every mail is written here in the transaction that causes it; a worker delivers it.
create table mail_outbox (
  id text primary key,
  tenant_id text references tenants (id) on delete cascade,
  recipients text[] not null,
  subject text not null,
  body text not null,
  status text not null default 'pending' check (status in ('pending', 'sent', 'logged', 'failed')),
  attempts integer not null default 0,
  last_error text,
  next_attempt_at timestamptz not null,
  locked_until timestamptz,
  created_at timestamptz not null,
  sent_at timestamptz
);
create index mail_outbox_due on mail_outbox (next_attempt_at) where status = 'pending';

-- API calls made with a key, counted per minute and per (key, route, status, client IP): a busy
-- key costs a row a minute per distinct call shape, not a row per call. Kept for 72 hours.
create table api_usage (
  tenant_id text not null,
  token_id text not null,
  method text not null,
  route text not null,
  status smallint not null,
  ip text not null,
  -- The start of the minute the calls were made in.
  at timestamptz not null,
  calls integer not null default 1 check (calls > 0)
);
create index api_usage_tenant_at on api_usage (tenant_id, at);
create index api_usage_token_at on api_usage (token_id, at);
create index api_usage_at on api_usage (at);
