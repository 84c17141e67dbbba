-- Prefixes in the account rollups: besides the aligned blocks, the job rollup-blocks writes for
-- each closed day the block from the first day of its epoch (64 days, a multiple of 64 after
-- 1970-01-01) to that day, of any span from 3 to 63 (1 is the day itself, the powers of two
-- are aligned blocks already). A window within an epoch is then read as the prefix through its
-- last closed day minus the prefix through the day before it, plus the days left (today): a
-- 30-day window at 10M clicks reads three pieces of about 50k rows, where its aligned blocks
-- were eight of as many rows each.
--
-- day_rows counts the day rows a block row sums (1 on a day's own row, which the writers never
-- set): where a window subtracts a prefix, a group whose rows all fall before the window sums to
-- zero day rows and is left out, as it has no row in the window.
--
-- The blocks written so far have no day_rows: they are deleted, and with them each tenant's fold
-- state, so the job's next run writes every block and prefix again from the days. Until then the
-- reports read days, exact but slower.

alter table account_rollups drop constraint account_rollups_span_check;
alter table account_rollups add constraint account_rollups_span_check check (span between 1 and 64);
alter table account_rollups add column day_rows integer not null default 1;

alter table account_source_rollups drop constraint account_source_rollups_span_check;
alter table account_source_rollups add constraint account_source_rollups_span_check check (span between 1 and 64);
alter table account_source_rollups add column day_rows integer not null default 1;

delete from account_rollups where span > 1;
delete from account_source_rollups where span > 1;
delete from rollup_block_state;
