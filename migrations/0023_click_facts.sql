-- Facts of a click the service works out itself (docs/tracking.md, "Facts of a click"): the device
-- type, OS and browser families from the user agent and client hints, and why a click is a bot's.
-- A bot's click is stored (so it can be looked at) but counted apart: never in clicks or
-- unique_clicks, only in bot_clicks, in every rollup the reports read.
alter table clicks add column device text;
alter table clicks add column os text;
alter table clicks add column browser text;
-- 'user_agent' (a known crawler or tool) or 'data_center' (an address of a hosting network); null: a person.
alter table clicks add column bot_reason text;

alter table daily_rollups add column bot_clicks bigint not null default 0;
alter table brand_rollups add column bot_clicks bigint not null default 0;
alter table account_rollups add column bot_clicks bigint not null default 0;
alter table account_source_rollups add column bot_clicks bigint not null default 0;
