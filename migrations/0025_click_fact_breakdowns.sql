-- Report breakdowns by a click's facts (docs/reports-and-mcp.md, "Breakdowns by click facts").
--
-- A conversion keeps its click's device type, OS and browser families and sub-ids, copied when it
-- is attributed (as its country is), so a report counts it under them without reading clicks.
-- Conversions recorded before this migration take them from their click in 0026.
alter table conversions add column device text;
alter table conversions add column os text;
alter table conversions add column browser text;
alter table conversions add column parameter_a text;
alter table conversions add column parameter_b text;

-- Device type x OS x browser a day, per brand, program and traffic source: the device, OS and
-- browser breakdowns (alone, together, with those three fields or filters) read it. Its families
-- are a few dozen a day, so it stays about as small as brand_rollups. '' stands for unknown.
-- Filled from the past in 0026. All nodes must run the code that writes device_rollups once this
-- migration has run, as for 0016.
create table device_rollups (
  tenant_id text not null references tenants (id) on delete cascade,
  day date not null,
  brand_id bigint not null,
  program_id bigint not null,
  traffic_source_id bigint not null,
  device text not null,
  os text not null,
  browser text not null,
  currency text not null,
  clicks bigint not null default 0,
  unique_clicks bigint not null default 0,
  bot_clicks bigint not null default 0,
  signup_count bigint not null default 0,
  ftd_count bigint not null default 0,
  qualifier_count bigint not null default 0,
  deposit_count bigint not null default 0,
  cpa_count bigint not null default 0,
  revshare_count bigint not null default 0,
  flatfee_count bigint not null default 0,
  deposit_amount numeric(24, 4) not null default 0,
  cpa_amount numeric(24, 4) not null default 0,
  revshare_amount numeric(24, 4) not null default 0,
  flatfee_amount numeric(24, 4) not null default 0,
  primary key (tenant_id, day, brand_id, program_id, traffic_source_id, device, os, browser, currency)
);

