import { currencyCode } from "../../platform/currency.js";
import { DAY_MS } from "../../platform/durations.js";
import { parseDateTime } from "../../platform/http/dates.js";
import { CONVERSION_STATUSES, type ConversionStatus, isConversionStatus } from "./conversion-status.js";
import {
  COMMISSION_TYPES,
  type ConversionType,
  canonicalTypeName,
  isConversionType,
  RECORDABLE_TYPES,
} from "./conversion-types.js";
import { RAW_EVENT_RETENTION_DAYS } from "./retention.js";

/** What a program or API caller sends; the postback sends every value as a string. */
export interface ConversionInput {
  type?: unknown;
  clickId?: unknown;
  value?: unknown;
  currency?: unknown;
  eventName?: unknown;
  externalId?: unknown;
  occurredAt?: unknown;
  status?: unknown;
}

/**
 * A conversion that passed every rule; value is a decimal string with up to 4 places, or null
 * when none was sent. A value without a currency gets the tenant's default currency when it is
 * recorded (recordConversions), so currency is null here for that case too.
 */
export interface ValidConversion {
  type: Exclude<ConversionType, "Click">;
  clickId: string | null;
  value: string | null;
  currency: string | null;
  eventName: string;
  externalId: string | null;
  occurredAt: Date;
  /** Null when none was sent: recorded as approved, and a repeat without one changes nothing. */
  status: ConversionStatus | null;
}

/** A rule a conversion breaks, with the path of the field at fault (`items[3].currency`). */
export class ConversionInputError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path} ${reason}`);
  }
}

const DECIMAL = /^-?(0|[1-9][0-9]{0,14})(\.[0-9]{1,4})?$/;

/**
 * How far back an occurredAt may be: the retention of raw conversions, the very figure the
 * retention job applies. A conversion dated before it would be deleted at the next run, and
 * then posted again with the same externalId it would be counted (and its webhooks sent) twice;
 * it would also make the job rollup-blocks rewrite every block from that day on.
 */
const MAX_AGE_DAYS = RAW_EVENT_RETENTION_DAYS;

/** How far from the server's clock an occurredAt may be; the future skew comes from CONVERSION_MAX_FUTURE_S. */
export interface ConversionTimeLimits {
  /** A program's clock may run a little ahead of ours; further ahead is a mistake. */
  maxFutureS: number;
}

/** CONVERSION_MAX_FUTURE_S's default: the limits readConversion applies when its caller passes none. */
export const DEFAULT_CONVERSION_TIME_LIMITS: Readonly<ConversionTimeLimits> = Object.freeze({ maxFutureS: 300 });

/** The limits an app's configuration sets: its API and its postback pass these to readConversion. */
export function conversionTimeLimits(config: { conversionMaxFutureS: number }): ConversionTimeLimits {
  return { maxFutureS: config.conversionMaxFutureS };
}

const describeSeconds = (seconds: number) =>
  seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? "" : "s"}` : `${seconds} seconds`;

function optionalText(value: unknown, path: string, max: number): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string" && typeof value !== "number") throw new ConversionInputError(path, "must be a string");
  const text = String(value).trim();
  if (text.includes("\u0000")) throw new ConversionInputError(path, "must not contain NUL characters");
  if (text.length > max) throw new ConversionInputError(path, `must be at most ${max} characters`);
  return text === "" ? null : text;
}

function readValue(raw: unknown, type: ConversionType, path: string): string | null {
  // Absent is null, not 0: a postback renders it empty and a POST payload sends null.
  if (raw === undefined || raw === null || raw === "") return null;
  const text = typeof raw === "number" ? String(raw) : typeof raw === "string" ? raw.trim() : null;
  if (text === null || !Number.isFinite(Number(text))) throw new ConversionInputError(path, "must be a number");
  // JSON numbers are floats: 19.99 arrives as 19.989999...; read it back at 4 places, but
  // refuse a number that really has more.
  let normalized = text;
  if (typeof raw === "number") {
    const scaled = raw * 10_000;
    if (Math.abs(scaled - Math.round(scaled)) > 1e-6 * Math.max(1, Math.abs(scaled))) normalized = `${text}!`;
    else normalized = String(Math.round(scaled) / 10_000);
  }
  if (!DECIMAL.test(normalized)) {
    throw new ConversionInputError(path, `'${text}' must be a decimal number with at most 4 decimal places`);
  }
  if (normalized.startsWith("-") && !COMMISSION_TYPES.has(type)) {
    throw new ConversionInputError(path, `must not be negative for ${type} (only commissions can be reversed)`);
  }
  return normalized;
}

/** Null when absent: the tenant's default currency is applied at recording when there is a value. */
function readCurrency(raw: unknown, path: string): string | null {
  const text = optionalText(raw, path, 3);
  if (text === null) return null;
  const code = currencyCode(text);
  if (code === null) throw new ConversionInputError(path, `'${text}' is not an ISO 4217 currency code`);
  return code;
}

/**
 * A macro the network left unfilled: `<clickId>`, `{clickId}`, `{{click_id}}`, `${clickId}`,
 * `[clickId]`, `#clickId#`, `%clickId%`, or the same with the brackets still percent-encoded
 * (`%7BclickId%7D`). Recording it would make an unattributed conversion under a click id that
 * every such postback shares; no click id we make has these brackets.
 */
const UNFILLED_MACRO = new RegExp(
  [
    String.raw`<\s*NAME\s*>`,
    String.raw`\{+\s*NAME\s*\}+`,
    String.raw`\$\{+\s*NAME\s*\}+`,
    String.raw`\$NAME\$?`,
    String.raw`\[+\s*NAME\s*\]+`,
    String.raw`#+\s*NAME\s*#+`,
    "%NAME%",
    String.raw`(%7B)+\s*NAME\s*(%7D)+`,
    String.raw`\$(%7B)+\s*NAME\s*(%7D)+`,
    String.raw`%3C\s*NAME\s*%3E`,
    String.raw`(%5B)+\s*NAME\s*(%5D)+`,
    String.raw`(%23)+\s*NAME\s*(%23)+`,
  ]
    .map((form) => form.replaceAll("NAME", "[A-Za-z_][A-Za-z0-9_.:-]*"))
    .map((form) => `^${form}$`)
    .join("|"),
  "i",
);

/** A status in any case (`Approved`, `REVERSED`); null when absent. */
function readStatus(raw: unknown, path: string): ConversionStatus | null {
  const text = optionalText(raw, path, 40);
  if (text === null) return null;
  const status = text.toLowerCase();
  if (!isConversionStatus(status)) {
    throw new ConversionInputError(
      path,
      `'${text}' is not a status; one of ${CONVERSION_STATUSES.join(", ")} (any case)`,
    );
  }
  return status;
}

function readClickId(raw: unknown, path: string): string | null {
  const text = optionalText(raw, path, 100);
  if (text !== null && UNFILLED_MACRO.test(text)) {
    throw new ConversionInputError(
      path,
      `'${text}' is an unfilled placeholder: the network did not fill its click id macro. Fix the postback ` +
        "URL at the network so it sends the click id from the landing URL; nothing was recorded",
    );
  }
  return text;
}

function readTime(raw: unknown, path: string, now: Date, limits: ConversionTimeLimits): Date {
  if (raw === undefined || raw === null || raw === "") return now;
  const date = typeof raw === "string" ? parseDateTime(raw.trim()) : null;
  if (date === null) {
    throw new ConversionInputError(
      path,
      `'${String(raw)}' must be an ISO 8601 date-time with an offset, e.g. 2026-11-21T10:00:00Z`,
    );
  }
  if (date.getTime() > now.getTime() + limits.maxFutureS * 1000) {
    throw new ConversionInputError(path, `may be at most ${describeSeconds(limits.maxFutureS)} in the future`);
  }
  // The same cutoff as the retention job's: what it would delete is refused here.
  if (date.getTime() < now.getTime() - MAX_AGE_DAYS * DAY_MS) {
    throw new ConversionInputError(path, `may be at most ${MAX_AGE_DAYS} days in the past`);
  }
  return date;
}

/**
 * Checks one conversion; `prefix` is prepended to paths (`items[2].`). `limits` are the app's
 * (conversionTimeLimits(ctx.config)); without them (the demo traffic, dated in the past), the
 * defaults apply.
 */
export function readConversion(
  input: ConversionInput,
  prefix: string,
  now: Date,
  limits: ConversionTimeLimits = DEFAULT_CONVERSION_TIME_LIMITS,
): ValidConversion {
  const sent = optionalText(input.type, `${prefix}type`, 40);
  if (sent === null) throw new ConversionInputError(`${prefix}type`, "is required");
  // Any case: `signup` is a Signup. A Click is made by the redirect, never recorded by a caller.
  const type = canonicalTypeName(sent);
  if (!isConversionType(type) || type === "Click") {
    throw new ConversionInputError(
      `${prefix}type`,
      `'${sent}' is not a type a caller records; one of ${RECORDABLE_TYPES.join(", ")} (any case)`,
    );
  }
  const value = readValue(input.value, type, `${prefix}value`);
  return {
    type,
    clickId: readClickId(input.clickId, `${prefix}clickId`),
    value,
    currency: readCurrency(input.currency, `${prefix}currency`),
    eventName: optionalText(input.eventName, `${prefix}eventName`, 100) ?? type,
    externalId: optionalText(input.externalId, `${prefix}externalId`, 200),
    occurredAt: readTime(input.occurredAt, `${prefix}occurredAt`, now, limits),
    status: readStatus(input.status, `${prefix}status`),
  };
}
