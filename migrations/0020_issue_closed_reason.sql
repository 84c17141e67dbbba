-- The reason a person gave when closing an issue by hand (POST /issues/{id}/close); null for an
-- open issue and for one closed automatically (its cause gone: details.resolution says how).
-- Reopening clears it.
alter table account_issues add column closed_reason text;
