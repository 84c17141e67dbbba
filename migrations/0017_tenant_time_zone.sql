-- The tenant's time zone (an IANA name, checked by the service): the zone its reports, the
-- conversions list's date filters and the usage series read days in unless a request names one
-- (docs/money-and-time.md).
alter table tenants add column time_zone text not null default 'UTC';
