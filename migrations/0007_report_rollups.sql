-- Coarser rollups for the reports. daily_rollups is keyed down to link x source x tracker x
-- country, about a row per click on a big tenant, so a report over it scans millions of rows.
-- These hold the same sums over fewer dimensions and are kept by the very writes that keep
-- daily_rollups (the click batch's statement, the conversions' upsert), so they always agree with
-- it. They keep only the measures the reports read. A report reads the smallest one that has
-- every column it needs (src/features/reports/sources.ts).
--
-- The account rollups also hold blocks of days: `span` days (1, 4, 16 or 64) starting on `day`,
-- a multiple of `span` days after 1970-01-01. A window of days is read as the few aligned blocks
-- that tile it exactly (a 30-day window is 7 blocks on average), so a report over a month
-- touches a few rows per account, not 30. Each span costs the writers an upsert per account.
--
-- All nodes must run the code that writes these tables once this migration has run: a node still
-- on the previous version would update daily_rollups alone.

create table brand_rollups (
  tenant_id text not null references tenants (id) on delete cascade,
  day date not null,
  brand_id bigint not null,
  program_id bigint not null,
  traffic_source_id bigint not null,
  country text not null,
  clicks bigint not null default 0,
  unique_clicks bigint not null default 0,
  signup_count bigint not null default 0,
  ftd_count bigint not null default 0,
  qualifier_count bigint not null default 0,
  deposit_count bigint not null default 0,
  deposit_amount numeric(24, 4) not null default 0,
  cpa_amount numeric(24, 4) not null default 0,
  revshare_amount numeric(24, 4) not null default 0,
  flatfee_amount numeric(24, 4) not null default 0,
  primary key (tenant_id, day, brand_id, program_id, traffic_source_id, country)
);

create table account_rollups (
  tenant_id text not null references tenants (id) on delete cascade,
  span smallint not null check (span in (1, 4, 16, 64)),
  day date not null,
  account_id bigint not null,
  program_id bigint not null,
  clicks bigint not null default 0,
  unique_clicks bigint not null default 0,
  signup_count bigint not null default 0,
  ftd_count bigint not null default 0,
  qualifier_count bigint not null default 0,
  deposit_count bigint not null default 0,
  deposit_amount numeric(24, 4) not null default 0,
  cpa_amount numeric(24, 4) not null default 0,
  revshare_amount numeric(24, 4) not null default 0,
  flatfee_amount numeric(24, 4) not null default 0,
  primary key (tenant_id, span, day, account_id, program_id)
);

create table account_source_rollups (
  tenant_id text not null references tenants (id) on delete cascade,
  span smallint not null check (span in (1, 4, 16, 64)),
  day date not null,
  account_id bigint not null,
  traffic_source_id bigint not null,
  program_id bigint not null,
  clicks bigint not null default 0,
  unique_clicks bigint not null default 0,
  signup_count bigint not null default 0,
  ftd_count bigint not null default 0,
  qualifier_count bigint not null default 0,
  deposit_count bigint not null default 0,
  deposit_amount numeric(24, 4) not null default 0,
  cpa_amount numeric(24, 4) not null default 0,
  revshare_amount numeric(24, 4) not null default 0,
  flatfee_amount numeric(24, 4) not null default 0,
  primary key (tenant_id, span, day, account_id, traffic_source_id, program_id)
);

-- The existing sums. No event is written meanwhile, so the copy is exact when the writers start
-- keeping these tables. Rows go in key order: a block's rows lie together, which a report over a
-- big tenant reads several times faster than rows spread over the table.
lock table daily_rollups in share mode;

insert into brand_rollups (tenant_id, day, brand_id, program_id, traffic_source_id, country, clicks, unique_clicks,
  signup_count, ftd_count, qualifier_count, deposit_count, deposit_amount, cpa_amount, revshare_amount, flatfee_amount)
select tenant_id, day, brand_id, program_id, traffic_source_id, country, sum(clicks), sum(unique_clicks),
  sum(signup_count), sum(ftd_count), sum(qualifier_count), sum(deposit_count), sum(deposit_amount), sum(cpa_amount),
  sum(revshare_amount), sum(flatfee_amount)
from daily_rollups
group by 1, 2, 3, 4, 5, 6
order by 1, 2, 3, 4, 5, 6;

insert into account_rollups (tenant_id, span, day, account_id, program_id, clicks, unique_clicks, signup_count,
  ftd_count, qualifier_count, deposit_count, deposit_amount, cpa_amount, revshare_amount, flatfee_amount)
select tenant_id, 1, day, account_id, program_id, sum(clicks), sum(unique_clicks), sum(signup_count), sum(ftd_count),
  sum(qualifier_count), sum(deposit_count), sum(deposit_amount), sum(cpa_amount), sum(revshare_amount),
  sum(flatfee_amount)
from daily_rollups
group by 1, 2, 3, 4, 5
order by 1, 2, 3, 4, 5;

insert into account_source_rollups (tenant_id, span, day, account_id, traffic_source_id, program_id, clicks,
  unique_clicks, signup_count, ftd_count, qualifier_count, deposit_count, deposit_amount, cpa_amount, revshare_amount,
  flatfee_amount)
select tenant_id, 1, day, account_id, traffic_source_id, program_id, sum(clicks), sum(unique_clicks),
  sum(signup_count), sum(ftd_count), sum(qualifier_count), sum(deposit_count), sum(deposit_amount), sum(cpa_amount),
  sum(revshare_amount), sum(flatfee_amount)
from daily_rollups
group by 1, 2, 3, 4, 5, 6
order by 1, 2, 3, 4, 5, 6;

-- The longer spans from the days: a block of n days sums its days.
insert into account_rollups (tenant_id, span, day, account_id, program_id, clicks, unique_clicks, signup_count,
  ftd_count, qualifier_count, deposit_count, deposit_amount, cpa_amount, revshare_amount, flatfee_amount)
select r.tenant_id, s.span, r.day - (((r.day - date '1970-01-01') % s.span) + s.span) % s.span, r.account_id,
  r.program_id, sum(r.clicks), sum(r.unique_clicks), sum(r.signup_count), sum(r.ftd_count), sum(r.qualifier_count),
  sum(r.deposit_count), sum(r.deposit_amount), sum(r.cpa_amount), sum(r.revshare_amount), sum(r.flatfee_amount)
from account_rollups r
cross join (values (4), (16), (64)) as s (span)
where r.span = 1
group by 1, 2, 3, 4, 5
order by 1, 2, 3, 4, 5;

insert into account_source_rollups (tenant_id, span, day, account_id, traffic_source_id, program_id, clicks,
  unique_clicks, signup_count, ftd_count, qualifier_count, deposit_count, deposit_amount, cpa_amount, revshare_amount,
  flatfee_amount)
select r.tenant_id, s.span, r.day - (((r.day - date '1970-01-01') % s.span) + s.span) % s.span, r.account_id,
  r.traffic_source_id, r.program_id, sum(r.clicks), sum(r.unique_clicks), sum(r.signup_count), sum(r.ftd_count),
  sum(r.qualifier_count), sum(r.deposit_count), sum(r.deposit_amount), sum(r.cpa_amount), sum(r.revshare_amount),
  sum(r.flatfee_amount)
from account_source_rollups r
cross join (values (4), (16), (64)) as s (span)
where r.span = 1
group by 1, 2, 3, 4, 5, 6
order by 1, 2, 3, 4, 5, 6;

analyze brand_rollups, account_rollups, account_source_rollups;
