-- Money in one currency (docs/money-and-time.md).
--
-- * Exchange rates as units of a currency per 1 EUR, by day: the euro reference rates (tenant_id
--   '', fetched daily from FX_RATES_URL) and each tenant's own rates (its tenant id), which win
--   over the reference rate of the same day for that tenant. A report converts each amount at the
--   latest rate dated on or before its event's UTC day.
-- * The rollups keep amounts per currency: `currency` joins every rollup's key ('' on rows of
--   clicks, and of conversions recorded without a value). Nothing is stored converted, so a new
--   rate or a change of reporting currency re-converts history at the next report.
-- * Amounts summed before this migration had no currency in their key; they are taken to be in
--   their tenant's default currency (before this migration reports added them up as such).
--
-- All nodes must run the code that writes `currency` once this migration has run: an older node
-- would write its rows with currency '' and their amounts would count as unconverted.

create table exchange_rates (
  tenant_id text not null default '',
  currency text not null check (currency ~ '^[A-Z]{3}$' and currency <> 'EUR'),
  day date not null,
  rate numeric(30, 10) not null check (rate > 0),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, currency, day)
);

alter table tenants add column reporting_currency text check (reporting_currency ~ '^[A-Z]{3}$');

alter table daily_rollups add column currency text not null default '';
-- The coarser rollups also count the commissions, so that a report can say how many conversions a
-- currency without a rate left out.
alter table brand_rollups add column currency text not null default '';
alter table account_rollups add column currency text not null default '';
alter table account_source_rollups add column currency text not null default '';
alter table brand_rollups add column cpa_count bigint not null default 0,
  add column revshare_count bigint not null default 0, add column flatfee_count bigint not null default 0;
alter table account_rollups add column cpa_count bigint not null default 0,
  add column revshare_count bigint not null default 0, add column flatfee_count bigint not null default 0;
alter table account_source_rollups add column cpa_count bigint not null default 0,
  add column revshare_count bigint not null default 0, add column flatfee_count bigint not null default 0;

update daily_rollups r set currency = t.default_currency from tenants t
 where t.id = r.tenant_id and (r.click_amount <> 0 or r.signup_amount <> 0 or r.ftd_amount <> 0
   or r.qualifier_amount <> 0 or r.deposit_amount <> 0 or r.cpa_amount <> 0 or r.revshare_amount <> 0
   or r.flatfee_amount <> 0);
update brand_rollups r set currency = t.default_currency from tenants t
 where t.id = r.tenant_id and (r.deposit_amount <> 0 or r.cpa_amount <> 0 or r.revshare_amount <> 0
   or r.flatfee_amount <> 0);
update account_rollups r set currency = t.default_currency from tenants t
 where t.id = r.tenant_id and (r.deposit_amount <> 0 or r.cpa_amount <> 0 or r.revshare_amount <> 0
   or r.flatfee_amount <> 0);
update account_source_rollups r set currency = t.default_currency from tenants t
 where t.id = r.tenant_id and (r.deposit_amount <> 0 or r.cpa_amount <> 0 or r.revshare_amount <> 0
   or r.flatfee_amount <> 0);

alter table daily_rollups drop constraint daily_rollups_pkey;
alter table daily_rollups add primary key
  (tenant_id, day, account_id, link_id, brand_id, program_id, traffic_source_id, tracker_id, country, currency);
alter table brand_rollups drop constraint brand_rollups_pkey;
alter table brand_rollups add primary key (tenant_id, day, brand_id, program_id, traffic_source_id, country, currency);
alter table account_rollups drop constraint account_rollups_pkey;
alter table account_rollups add primary key (tenant_id, span, day, account_id, program_id, currency);
alter table account_source_rollups drop constraint account_source_rollups_pkey;
alter table account_source_rollups add primary key
  (tenant_id, span, day, account_id, traffic_source_id, program_id, currency);

-- The currencies each tenant has amounts in, kept by the rollup writes: a report converts only
-- these, and a tenant whose amounts are all in the reporting currency converts nothing.
create table report_currencies (
  tenant_id text not null references tenants (id) on delete cascade,
  currency text not null,
  primary key (tenant_id, currency)
);
insert into report_currencies (tenant_id, currency)
select distinct tenant_id, currency from daily_rollups where currency <> '';

-- The rows with an amount, by day: a report in another currency than the amounts' reads them as
-- single days to convert each at its day's rate, while its counts still come from the blocks.
create index daily_rollups_money on daily_rollups (tenant_id, day) where currency <> '';
create index brand_rollups_money on brand_rollups (tenant_id, day) where currency <> '';
create index account_rollups_money on account_rollups (tenant_id, day) where span = 1 and currency <> '';
create index account_source_rollups_money on account_source_rollups (tenant_id, day)
  where span = 1 and currency <> '';
