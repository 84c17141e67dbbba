-- Outgoing webhooks: metering against the monthly allowance, Held events, and suspension.

-- Set by the first failed attempt after a success, cleared by the next 2xx: a webhook failing
-- since more than 5 days is suspended.
alter table outgoing_webhooks add column failing_since timestamptz;

-- An event counts against the allowance once, at its first attempt.
alter table webhook_events add column counted boolean not null default false;

-- Held events are claimed again when they fall due (every couple of hours).
drop index webhook_events_due;
create index webhook_events_due on webhook_events (next_attempt_at) where status in ('Queued', 'Retrying', 'Held');

-- Postbacks sent per tenant and calendar month (UTC).
create table webhook_usage (
  tenant_id text not null references tenants (id) on delete cascade,
  month date not null,
  sent integer not null default 0,
  primary key (tenant_id, month)
);

-- Events by click: the events API's clickId filter, and Click postbacks written once per click.
create index webhook_events_click on webhook_events (click_id) where click_id is not null;
