import { Type } from "typebox";
import type { IdPrefix } from "../ids.js";

// `newId` writes a prefix, `_` and 26 base32 digits; a little slack for ids made otherwise.
const MAX_ID_LENGTH = 64;

/**
 * A prefixed id in a path. Deliberately not validated by the schema: a malformed id is simply
 * an id that does not exist (404, API.md), checked in the handler with `couldBeId` after the
 * caller's credential (401) and permission (403).
 */
export function PathId(prefix: IdPrefix, what: string) {
  return Type.Object({ id: Type.String({ description: `The ${what}'s id (${prefix}_...)` }) });
}

/**
 * Whether `value` has the shape of an id `newId(prefix)` makes. Anything else cannot exist, so
 * it is answered 404 without a lookup (which also keeps bytes Postgres refuses, like NUL, out
 * of queries).
 */
export function couldBeId(value: string, prefix: IdPrefix): boolean {
  return (
    value.length <= MAX_ID_LENGTH &&
    value.startsWith(`${prefix}_`) &&
    /^[0-9a-z]+$/.test(value.slice(prefix.length + 1))
  );
}
