-- Saved reports: a named set of a report's query parameters a tenant's people can reopen
-- (docs/reports-and-mcp.md). The creator is a snapshot (id and name at creation), so the record
-- stays whole when the person or API key is later deleted.
create table saved_reports (
  id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  name text not null,
  report text not null,
  params jsonb not null default '{}',
  created_by_id text not null,
  created_by_name text not null,
  created_at timestamptz not null default now()
);
create unique index saved_reports_name_unique on saved_reports (tenant_id, lower(name));
create index saved_reports_tenant_created on saved_reports (tenant_id, created_at desc, id desc);
