import type { FieldError } from "../../platform/http/errors.js";
import { namedIn, type PostbackLogEntry, type PostbackVia, sentFields } from "./entry.js";

/** What the log needs of a recorded item (the tracking feature's RecordedConversion has it). */
export interface RecordedItem {
  conversion: { id: string; type: string; clickId: string | null; externalId: string | null };
  duplicate: boolean;
  statusChanged: boolean;
}

interface Call {
  /** Null for a call whose postback key is unknown. */
  tenantId: string | null;
  at: Date;
  via: PostbackVia;
}

/** A line per recorded item: `sent[i]` is what item i was sent as. */
export function recordedLines(
  call: Call,
  sent: readonly unknown[],
  recorded: readonly RecordedItem[],
): PostbackLogEntry[] {
  return recorded.map(({ conversion, duplicate, statusChanged }, i) => ({
    ...call,
    outcome: statusChanged ? "statusChanged" : duplicate ? "duplicate" : "recorded",
    reason: null,
    field: null,
    conversionId: conversion.id,
    clickId: conversion.clickId,
    externalId: conversion.externalId,
    type: conversion.type,
    query: sentFields(sent[i]),
  }));
}

// An API batch's errors name their item: `items[3].type`.
const ITEM_PATH = /^items\[(\d+)\]\.?(.*)$/;

/**
 * A line per item of a refused call (nothing of it was recorded). An item a field error names
 * gets that error; in a batch refused for other items, an item gets a reason saying so, naming
 * the first of them, so every line tells why its conversion is missing.
 */
export function refusedLines(
  call: Call,
  sent: readonly unknown[],
  errors: readonly FieldError[],
  message: string,
): PostbackLogEntry[] {
  const byItem = new Map<number, FieldError[]>();
  for (const error of errors) {
    const match = ITEM_PATH.exec(error.path);
    if (!match) continue;
    const index = Number(match[1]);
    const list = byItem.get(index) ?? [];
    list.push({ path: match[2] || "item", message: error.message });
    byItem.set(index, list);
  }
  const batchWide = errors.filter((error) => !ITEM_PATH.test(error.path));
  return sent.map((raw, i) => {
    const own = byItem.get(i) ?? (sent.length === 1 || byItem.size === 0 ? batchWide : []);
    const first = own[0];
    return {
      ...call,
      outcome: "refused",
      reason:
        own.length > 0
          ? own.map((e) => `${e.path} ${e.message}`).join("; ")
          : `Not recorded: the batch was refused for other items (${message})`,
      field: first ? first.path : null,
      conversionId: null,
      ...namedIn(raw),
      query: sentFields(raw),
    };
  });
}
