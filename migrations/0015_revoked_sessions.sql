-- Dashboard tokens ended by sign-out (DELETE /api/v1/auth; docs/auth-and-tokens.md).
--
-- A token is signed, not stored, so it would stay valid for its 12 hours: a signed-out one is
-- listed here, by the SHA-256 of the token (never the token), until it would have expired, so
-- that every node, and a node started later, refuses it. The retention job deletes a row once
-- its token has expired anyway.
create table revoked_sessions (
  token_hash text primary key,
  tenant_id text not null references tenants (id) on delete cascade,
  user_id text not null,
  expires_at timestamptz not null,
  revoked_at timestamptz not null
);
create index revoked_sessions_expiry on revoked_sessions (expires_at);
