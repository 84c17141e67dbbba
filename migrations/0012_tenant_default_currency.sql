-- Integrator-facing conversions (docs/conversions.md):
-- * each tenant has a default currency, applied to a conversion that has a value but no currency
--   (a network's postback template often has no currency macro; refusing it lost the conversion);
-- * a conversion recorded without a value stores NULL, not 0: a postback then renders the value as
--   an empty string and a POST payload sends null. Rows recorded before keep their 0 (an explicit
--   0 and an absent value cannot be told apart after the fact). The rollups still add 0 for it.
alter table tenants add column default_currency text not null default 'USD'
  check (default_currency ~ '^[A-Z]{3}$');
alter table conversions alter column value drop not null;
alter table conversions alter column value drop default;
