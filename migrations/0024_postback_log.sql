-- The log of incoming conversions (docs/conversions.md, "The postback log"): every call of /postback/{key} and every
-- item of POST /api/v1/conversions with its outcome, so a network's integrator can see what
-- arrived and why it was refused. Kept 30 days. A call with an unknown key has no tenant.
create table postback_log (
  id text primary key,
  tenant_id text references tenants (id) on delete cascade,
  at timestamptz not null,
  via text not null,
  outcome text not null,
  reason text,
  field text,
  conversion_id text,
  click_id text,
  external_id text,
  type text,
  query jsonb not null default '{}'
);
create index postback_log_tenant_at on postback_log (tenant_id, at desc, id desc);
create index postback_log_click on postback_log (tenant_id, click_id, at desc) where click_id is not null;
create index postback_log_external on postback_log (tenant_id, external_id, at desc) where external_id is not null;
-- Retention deletes by age across tenants (unknown keys included).
create index postback_log_at on postback_log (at);
