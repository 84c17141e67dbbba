-- Rotating the postback key with a grace period (docs/tracking-and-postbacks.md, "Rotating the
-- postback key"): the key that was replaced keeps working until previous_postback_key_until, so
-- the programs that send to it can be moved over one by one. Only its SHA-256, as for the key.
alter table tenants add column previous_postback_key_hash text;
alter table tenants add column previous_postback_key_until timestamptz;
create index tenants_previous_postback_key on tenants (previous_postback_key_hash)
  where previous_postback_key_hash is not null;
