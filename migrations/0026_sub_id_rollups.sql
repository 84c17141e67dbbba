-- Sub-id breakdowns from rollups (docs/reports-and-mcp.md, "Breakdowns by click facts"), and the
-- click-fact rollups filled from the past.
--
-- A sub-id (pa, pb of the click URL) can have a value per click, so each of its rollups holds at
-- most about 10,000 values a tenant and day (SUB_ID_VALUES_PER_DAY in
-- src/features/tracking/rollups.ts): past that, a writer leaves a new value out and marks the day
-- in sub_id_rollup_gaps, and a report over a window with such a day reads the raw events
-- instead (a window of at most 31 days within the raw events' retention).
create table sub_id_a_rollups (
  tenant_id text not null references tenants (id) on delete cascade,
  day date not null,
  traffic_source_id bigint not null,
  parameter_a text not null,
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
  primary key (tenant_id, day, traffic_source_id, parameter_a, currency)
);

create table sub_id_b_rollups (like sub_id_a_rollups including all);
alter table sub_id_b_rollups rename column parameter_a to parameter_b;
alter table sub_id_b_rollups add foreign key (tenant_id) references tenants (id) on delete cascade;

-- Days a sub-id rollup left a value out of (parameter 'a' or 'b').
create table sub_id_rollup_gaps (
  tenant_id text not null references tenants (id) on delete cascade,
  parameter text not null check (parameter in ('a', 'b')),
  day date not null,
  primary key (tenant_id, parameter, day)
);

-- Conversions take their click's facts and sub-ids, as the writers copy them from now on.
update conversions v
   set device = c.device, os = c.os, browser = c.browser, parameter_a = c.parameter_a, parameter_b = c.parameter_b
  from clicks c
 where v.click_id is not null and c.tenant_id = v.tenant_id and c.id = v.click_id;

-- The past: the days whose raw events are all kept (the last 120, RAW_EVENT_RETENTION_DAYS) from
-- them, each event under its click's facts and sub-ids, as the writers count them; the days before,
-- which only daily_rollups holds, as unknown device, OS, browser and sub-ids. A report by any of
-- them then has the totals of every other report.
lock table daily_rollups in share mode;
truncate device_rollups;

create temporary table past_events on commit drop as
with cut as (select (now() at time zone 'UTC')::date - 119 as day)
select tenant_id, day, brand_id, program_id, traffic_source_id, '' as device, '' as os, '' as browser,
       '' as parameter_a, '' as parameter_b, currency, clicks, unique_clicks, bot_clicks, signup_count, ftd_count,
       qualifier_count, deposit_count, cpa_count, revshare_count, flatfee_count, deposit_amount, cpa_amount,
       revshare_amount, flatfee_amount
  from daily_rollups where day < (select day from cut)
union all
select tenant_id, (at at time zone 'UTC')::date, coalesce(brand_id, 0), coalesce(program_id, 0),
       coalesce(traffic_source_id, 0), coalesce(device, ''), coalesce(os, ''), coalesce(browser, ''),
       coalesce(parameter_a, ''), coalesce(parameter_b, ''), '', (bot_reason is null)::int, is_unique::int,
       (bot_reason is not null)::int, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
  from clicks where at >= (select day from cut)
union all
select tenant_id, (occurred_at at time zone 'UTC')::date, coalesce(brand_id, 0), coalesce(program_id, 0),
       coalesce(traffic_source_id, 0), coalesce(device, ''), coalesce(os, ''), coalesce(browser, ''),
       coalesce(parameter_a, ''), coalesce(parameter_b, ''),
       coalesce(case when value is not null then currency end, ''), 0, 0, 0,
       (type = 'Signup')::int, (type = 'FirstTimeDeposit')::int, (type = 'Qualifier')::int, (type = 'Deposit')::int,
       (type = 'CpaCommission')::int, (type = 'RevShareCommission')::int, (type = 'FlatFeeCommission')::int,
       case when type = 'Deposit' then coalesce(value, 0) else 0 end,
       case when type = 'CpaCommission' then coalesce(value, 0) else 0 end,
       case when type = 'RevShareCommission' then coalesce(value, 0) else 0 end,
       case when type = 'FlatFeeCommission' then coalesce(value, 0) else 0 end
  from conversions
 where occurred_at >= (select day from cut) and status in ('pending', 'approved');

insert into device_rollups (tenant_id, day, brand_id, program_id, traffic_source_id, device, os, browser, currency,
  clicks, unique_clicks, bot_clicks, signup_count, ftd_count, qualifier_count, deposit_count, cpa_count, revshare_count,
  flatfee_count, deposit_amount, cpa_amount, revshare_amount, flatfee_amount)
select tenant_id, day, brand_id, program_id, traffic_source_id, device, os, browser, currency, sum(clicks),
  sum(unique_clicks), sum(bot_clicks), sum(signup_count), sum(ftd_count), sum(qualifier_count), sum(deposit_count),
  sum(cpa_count), sum(revshare_count), sum(flatfee_count), sum(deposit_amount), sum(cpa_amount), sum(revshare_amount),
  sum(flatfee_amount)
from past_events
group by 1, 2, 3, 4, 5, 6, 7, 8, 9
order by 1, 2, 3, 4, 5, 6, 7, 8, 9;

insert into sub_id_a_rollups (tenant_id, day, traffic_source_id, parameter_a, currency, clicks, unique_clicks,
  bot_clicks, signup_count, ftd_count, qualifier_count, deposit_count, cpa_count, revshare_count, flatfee_count,
  deposit_amount, cpa_amount, revshare_amount, flatfee_amount)
select tenant_id, day, traffic_source_id, parameter_a, currency, sum(clicks), sum(unique_clicks), sum(bot_clicks),
  sum(signup_count), sum(ftd_count), sum(qualifier_count), sum(deposit_count), sum(cpa_count), sum(revshare_count),
  sum(flatfee_count), sum(deposit_amount), sum(cpa_amount), sum(revshare_amount), sum(flatfee_amount)
from past_events
group by 1, 2, 3, 4, 5
order by 1, 2, 3, 4, 5;

insert into sub_id_b_rollups (tenant_id, day, traffic_source_id, parameter_b, currency, clicks, unique_clicks,
  bot_clicks, signup_count, ftd_count, qualifier_count, deposit_count, cpa_count, revshare_count, flatfee_count,
  deposit_amount, cpa_amount, revshare_amount, flatfee_amount)
select tenant_id, day, traffic_source_id, parameter_b, currency, sum(clicks), sum(unique_clicks), sum(bot_clicks),
  sum(signup_count), sum(ftd_count), sum(qualifier_count), sum(deposit_count), sum(cpa_count), sum(revshare_count),
  sum(flatfee_count), sum(deposit_amount), sum(cpa_amount), sum(revshare_amount), sum(flatfee_amount)
from past_events
group by 1, 2, 3, 4, 5
order by 1, 2, 3, 4, 5;

analyze device_rollups, sub_id_a_rollups, sub_id_b_rollups;
