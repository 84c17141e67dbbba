-- Coarser rollups for the reports. daily_rollups is keyed down to link x source x tracker x
-- country, about a row per click on a big tenant, so a report over it scans millions of rows.
-- These hold the same sums over fewer dimensions and are kept by the very writes that keep
-- daily_rollups (the click batch's statement, the conversions' upsert), so they always agree with
-- it. They keep only the measures the reports read. A report reads the smallest one that has
-- every column it needs (src/features/reports/sources.ts).
--
-- The account rollups also hold blocks of days: `span` days (2, 4, 8, 16, 32 or 64) starting on
-- `day`, a multiple of `span` days after 1970-01-01, besides the days (span 1). The writers keep
-- only the days; the job rollup-blocks (src/features/reports/blocks.ts) writes each block, once
-- its days are closed, as the sum of its days. A report reads a block only while it is current:
-- it ends by its tenant's rollup_block_state.folded_through and none of its days is in
-- rollup_block_dirty, where a writer marks, in the same statement, every day before today (UTC) it
-- changes. Otherwise it reads shorter blocks or days, so a report is exact right after any write.

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
  span smallint not null check (span in (1, 2, 4, 8, 16, 32, 64)),
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
  span smallint not null check (span in (1, 2, 4, 8, 16, 32, 64)),
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

-- The days through which a tenant's blocks are written (the job's last fold).
create table rollup_block_state (
  tenant_id text primary key references tenants (id) on delete cascade,
  folded_through date not null
);

-- Days (before the writer's today) changed since the job last folded them: their blocks are not
-- read until the job has written them again.
create table rollup_block_dirty (
  tenant_id text not null references tenants (id) on delete cascade,
  day date not null,
  primary key (tenant_id, day)
);

-- The existing sums, days only (the job writes the blocks). No event is written meanwhile, so the
-- copy is exact when the writers start keeping these tables. Rows go in key order: a block's rows lie together, which a report over a
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

analyze brand_rollups, account_rollups, account_source_rollups;
