import type { FieldError } from "./errors.js";

/**
 * Input no column can hold, refused for the whole API at once (docs/limits.md "Hostile input"):
 * NUL, which PostgreSQL refuses in text and jsonb; a lone UTF-16 surrogate, which is not Unicode
 * (jsonb refuses it, and it breaks encoding); a number JavaScript cannot hold exactly, which
 * overflows bigint columns and OFFSET (1e21, a 40-digit id) or is not a number at all (1e309
 * parses as Infinity, and the schema validator lets a coerced Infinity through).
 *
 * Refused with a 400 naming the field, not stripped: stripping would change what the caller
 * asked for (a search, an external id, a name) without telling them.
 */

const NUL = "\u0000";
// Code units, not code points (no `u` flag): a high surrogate not followed by a low one, or a
// low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The largest magnitude accepted for any number: beyond it integers are no longer exact. */
export const MAX_EXACT_NUMBER = Number.MAX_SAFE_INTEGER;

/** Why a string cannot be accepted, or null. */
export function badText(value: string): string | null {
  if (value.includes(NUL)) return "must not contain a NUL character";
  if (LONE_SURROGATE.test(value)) return "must not contain a lone UTF-16 surrogate (it is not valid Unicode text)";
  return null;
}

/** Why a number cannot be accepted, or null. */
export function badNumber(value: number): string | null {
  if (Number.isFinite(value) && Math.abs(value) <= MAX_EXACT_NUMBER) return null;
  return `must be a finite number between -${MAX_EXACT_NUMBER} and ${MAX_EXACT_NUMBER}`;
}

function child(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/**
 * The first string, property name or number in `value` that no column can hold, with its path
 * in the form validation errors use (`items[0].name`); null when there is none. Iterative, so a
 * deeply nested body (the JSON parser takes thousands of levels) cannot overflow the stack.
 */
export function findHostileInput(value: unknown, root: string): FieldError | null {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === undefined) break;
    const [item, path] = next;
    if (typeof item === "string") {
      const message = badText(item);
      if (message) return { path: path || "body", message };
    } else if (typeof item === "number") {
      const message = badNumber(item);
      if (message) return { path: path || "body", message };
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i -= 1) stack.push([item[i], child(path, i)]);
    } else if (item !== null && typeof item === "object") {
      const entries = Object.entries(item as Record<string, unknown>);
      for (let i = entries.length - 1; i >= 0; i -= 1) {
        const [key, inner] = entries[i] as [string, unknown];
        // The name itself is not echoed: it is the part that cannot be printed.
        if (badText(key)) {
          return {
            path: path || "body",
            message: "has a property name with a NUL character or a lone UTF-16 surrogate",
          };
        }
        stack.push([inner, child(path, key)]);
      }
    }
  }
  return null;
}

/**
 * Whether `value` nests arrays and objects more than `max` levels deep. Iterative: the JSON
 * parser takes a 1 MiB body of half a million levels, and the schema validator's recursive
 * compare (enum, uniqueItems) would overflow the stack on it (a 500).
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const next = stack.pop();
    if (next === undefined) break;
    const [item, depth] = next;
    if (item === null || typeof item !== "object") continue;
    if (depth >= max) return true;
    for (const inner of Array.isArray(item) ? item : Object.values(item as Record<string, unknown>)) {
      if (inner !== null && typeof inner === "object") stack.push([inner, depth + 1]);
    }
  }
  return false;
}
