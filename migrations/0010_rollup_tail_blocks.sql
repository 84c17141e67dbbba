-- Tails in the account rollups: besides the aligned blocks and the prefixes, the job
-- rollup-blocks writes the blocks that end on the last day it folded, of every span from 2 to
-- 64 days (those that are an aligned block or a prefix already are not written twice). A window
-- ending today, the reports' default, is then read as one tail and today's days, with nothing
-- subtracted: a 30-day account x source report at 10M clicks reads two pieces of about 50k rows
-- where a prefix minus a prefix and today were three.
--
-- tails_through is the day the tenant's tails end on; null until the job's next run writes them
-- (until then windows are read as before). When a later run folds a later day, it deletes the
-- tails ending on the earlier one and writes the new ones; a day changed since (rollup_block_dirty)
-- keeps the tails holding it from being read until that run has written them again.

alter table rollup_block_state add column tails_through date;
