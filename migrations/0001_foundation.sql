-- Tenants, people, API tokens, audit log, node heartbeats and scheduled job runs.
create extension if not exists pg_trgm with schema public;

create table tenants (
  id text primary key,
  name text not null,
  postback_key_hash text not null unique,
  entitlements jsonb not null default '{"apiTokens": true, "clickWebhooks": false}',
  -- Outgoing webhook postbacks per calendar month; null means unlimited.
  webhook_allowance bigint default 100000 check (webhook_allowance is null or webhook_allowance >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index tenants_name_trgm on tenants using gin (lower(name) public.gin_trgm_ops);

create table users (
  id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  email text not null,
  name text not null,
  password_hash text not null,
  permissions text[] not null default '{}',
  disabled boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index users_email_unique on users (lower(email));
create index users_tenant on users (tenant_id, created_at);
create index users_name_trgm on users using gin (lower(name) public.gin_trgm_ops);

create table api_tokens (
  id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  name text not null,
  token_hash text not null unique,
  scopes text[] not null default '{}',
  legacy boolean not null,
  expiration_date timestamptz not null,
  created_at timestamptz not null default now(),
  created_by text references users (id) on delete set null,
  last_used_at timestamptz,
  last_used_ip text
);
create unique index api_tokens_name_unique on api_tokens (tenant_id, lower(name));
create index api_tokens_expiry on api_tokens (expiration_date);

create table audit_log (
  id text primary key,
  tenant_id text references tenants (id) on delete cascade,
  actor_type text not null check (actor_type in ('user', 'api_key', 'admin', 'system')),
  actor_id text,
  actor_name text not null,
  action text not null,
  subject_type text,
  subject_id text,
  details jsonb not null default '{}',
  request_id text,
  at timestamptz not null default now()
);
create index audit_log_tenant_at on audit_log (tenant_id, at desc, id desc);

-- Every worker and scheduler node writes its heartbeat here; health reads it.
create table node_heartbeats (
  node_id text not null,
  role text not null check (role in ('worker', 'scheduler')),
  started_at timestamptz not null,
  last_seen_at timestamptz not null,
  primary key (node_id, role)
);

-- One row per scheduled slot: the unique key is what makes a slot run once across nodes.
create table job_runs (
  id text primary key,
  job text not null,
  slot text not null,
  manual boolean not null default false,
  node_id text not null,
  started_at timestamptz not null,
  finished_at timestamptz,
  summary jsonb,
  error text,
  unique (job, slot)
);
create index job_runs_unfinished on job_runs (started_at) where finished_at is null;
