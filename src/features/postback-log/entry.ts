import { isSecretName, redactText } from "../../platform/log-redaction.js";

export const POSTBACK_LOG_OUTCOMES = ["recorded", "duplicate", "statusChanged", "refused"] as const;
export type PostbackLogOutcome = (typeof POSTBACK_LOG_OUTCOMES)[number];

/** How a conversion arrived: a program's call of /postback/{key}, or an item of POST /api/v1/conversions. */
export type PostbackVia = "postback" | "api";

/** One line of the log, as written. */
export interface PostbackLogEntry {
  /** Null for a call with an unknown postback key. */
  tenantId: string | null;
  at: Date;
  via: PostbackVia;
  outcome: PostbackLogOutcome;
  reason: string | null;
  field: string | null;
  conversionId: string | null;
  clickId: string | null;
  externalId: string | null;
  type: string | null;
  /** The fields as sent, bounded and with every secret redacted (sentFields). */
  query: Record<string, string>;
}

// What one line keeps of what was sent: a program may send anything in its query string, and the
// log must cost a bounded number of bytes per call however large the call was.
const MAX_FIELDS = 30;
const MAX_NAME = 64;
const MAX_VALUE = 256;
const REDACTED = "[redacted]";

function bounded(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (value === null || value === undefined) return "";
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}

/**
 * The fields of a postback or an API item as the log keeps them: at most 30, names and values
 * cut to a bounded length, the value of a credential-named field (key, token, secret, signature,
 * password...) replaced, and any credential shape inside another value (an API key, a signing
 * secret, a JWT) redacted as in the service's own logs.
 */
export function sentFields(raw: unknown): Record<string, string> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return {};
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw).slice(0, MAX_FIELDS)) {
    const shownName = bounded(name, MAX_NAME);
    out[shownName] = isSecretName(name) ? REDACTED : bounded(redactText(textOf(value)), MAX_VALUE);
  }
  return out;
}

/** A text field of what was sent, when it is one (a refused call may send anything). */
function textField(raw: unknown, name: string, max: number): string | null {
  if (typeof raw !== "object" || raw === null) return null;
  const value = (raw as Record<string, unknown>)[name];
  if (typeof value !== "string" && typeof value !== "number") return null;
  const text = String(value);
  return text === "" ? null : bounded(text, max);
}

/** The click id, external id and type a call named, read from what was sent, for the log's filters. */
export function namedIn(raw: unknown): Pick<PostbackLogEntry, "clickId" | "externalId" | "type"> {
  return {
    clickId: textField(raw, "clickId", 100),
    externalId: textField(raw, "externalId", 200),
    type: textField(raw, "type", 100),
  };
}
