/**
 * Readers for a page's search params, shared by every area's `validateSearch`. The router hands
 * values over already parsed (`?offset=50` and `?search=42` arrive as numbers) or, from a link a
 * test or a person wrote, as strings; a value the API would refuse is left out rather than sent,
 * so a shared address never leads to an error page. It imports only time-zones (which imports
 * nothing), so logic tests load it as it is.
 */

import { listedSpelling } from "./time-zones.js";

/**
 * A whole number above 0: a page's first row (the first page has none, so its address stays
 * short) or a record's numeric id.
 */
export function positiveIntParam(value: unknown): number | undefined {
  const n = typeof value === "string" && /^\d{1,16}$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** Whether the value is one of an enum's names, exactly as the API spells them. */
export const isOneOf = <T extends string>(values: readonly T[], value: unknown): value is T =>
  typeof value === "string" && (values as readonly string[]).includes(value);

/** Free text, trimmed; empty is none, and text longer than the API takes is cut to `max`. */
export function textParam(value: unknown, max: number): string | undefined {
  if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") return undefined;
  const text = String(value).trim();
  return text === "" ? undefined : text.slice(0, max);
}

/** Only the keys that hold a value, so the address carries nothing empty. */
export function compact<T extends object>(search: { [K in keyof T]?: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(search).filter(([, v]) => v !== undefined)) as T;
}

/** The same view at another offset; the first page carries no offset in its address. */
export function withOffset<T extends { offset?: number | undefined }>(search: T, offset: number): T {
  const { offset: _offset, ...rest } = search;
  return (offset > 0 ? { ...rest, offset } : rest) as T;
}

/** The longest id a list filter takes (the API's bound). */
const MAX_ID = 100;

/** An id typed into a filter: trimmed, non-empty; a longer one than the API accepts is dropped (cut, it would name another). */
export function idParam(value: unknown): string | undefined {
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  const text = String(value).trim();
  return text !== "" && text.length <= MAX_ID ? text : undefined;
}

/**
 * A currency in a page's address, as the reports take it (ISO 4217, any case): three letters,
 * upper-cased. Whether the API knows the code is the API's to say, next to the picker.
 */
export function currencyParam(value: unknown): string | undefined {
  return typeof value === "string" && /^[A-Za-z]{3}$/.test(value.trim()) ? value.trim().toUpperCase() : undefined;
}

/** IANA names: letters, digits, `_`, `-` and `+` in `/`-separated parts, as the API reads them. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/**
 * A time zone in a page's address (`tz`), as the reports take it: an IANA name in any case, in
 * its listed spelling ("asia/tokyo" is "Asia/Tokyo"). A name of the right shape that no zone has
 * is kept, for the API's message beside the picker; an offset ("+05:30") is no zone, left out.
 */
export function timeZoneParam(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const name = value.trim();
  return name.length <= 64 && ZONE_NAME.test(name) ? listedSpelling(name) : undefined;
}
