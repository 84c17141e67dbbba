-- The conversion lifecycle (docs/conversions.md): a conversion is pending, approved, rejected or
-- reversed; approved when none is given. Reports count pending and approved by default, so the
-- rollups hold those two only: a change in or out of them is added to or taken from the rollups
-- of the day the conversion occurred.
alter table conversions add column status text not null default 'approved'
  check (status in ('pending', 'approved', 'rejected', 'reversed'));
-- How it was recorded, for the first entry of its history: 'postback', 'api' or 'dashboard', and
-- who ({ type, id, name }; null for a postback).
alter table conversions add column recorded_via text;
alter table conversions add column recorded_by jsonb;

-- Every change of a conversion's status after its recording, oldest first by (at, id); deleted
-- with its conversion (the raw-event retention).
create table conversion_status_changes (
  id text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  conversion_id text not null references conversions (id) on delete cascade,
  at timestamptz not null,
  status text not null,
  previous_status text not null,
  reason text,
  source text not null check (source in ('postback', 'api', 'dashboard')),
  by_type text not null check (by_type in ('apiKey', 'user', 'postback')),
  by_id text,
  by_name text
);
create index conversion_status_changes_conversion on conversion_status_changes (conversion_id, at, id);

-- Who hears of a change: an outgoing webhook only when it asks (a receiver that does not know
-- statuses must not count a deposit twice). Traffic-source postbacks keep theirs in their settings.
alter table outgoing_webhooks add column status_changes boolean not null default false;

-- A Google Ads item withdrawn before its upload (the conversion was rejected or reversed), and
-- what became of a change after the upload.
alter table google_ads_items drop constraint google_ads_items_outcome_check;
alter table google_ads_items add constraint google_ads_items_outcome_check
  check (outcome in ('pending', 'accepted', 'refused', 'withdrawn'));
alter table google_ads_items add column status_note text;

-- Traffic-source postbacks saved before statuses existed take none: said in their settings.
update traffic_sources set postback = postback || '{"statusChanges": false}'::jsonb
 where postback is not null and not (postback ? 'statusChanges');
