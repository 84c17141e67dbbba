/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import type { TestApp } from "./app.js";
import type { CatalogFixture } from "./catalog.js";
import { type Receiver, startReceiver } from "./receiver.js";
import { cancelWaitingEvents, receiverPaths, startWebhookTestApp } from "./webhooks.js";

// The fixture of the outgoing webhook delivery tests: the bindings below are set by
// deliveryFixture()'s hooks; a test file reads them through the import (live bindings).

export const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36";
export const EVENT_KEYS = [
  "attempts",
  "clickId",
  "conversionId",
  "conversionStatus",
  "conversionType",
  "createdAt",
  "id",
  "lastAttemptAt",
  "nextAttemptAt",
  "simulated",
  "status",
  "webhookId",
];

export let t: TestApp;
export let rx: Receiver;
/** Tenants whose pending events outlive a test (a describe's shared fixture). */
export const keepPending = new Set<string>();

/** The app (clicks held in the buffer until a conversion needs them) and a loopback receiver, per test file. */
export function deliveryFixture(): void {
  beforeAll(async () => {
    // Clicks stay in the buffer until a conversion needs them; nothing writes them on a timer.
    t = await startWebhookTestApp({ app: { clicks: { intervalMs: 3_600_000 } } });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });
  afterEach(() => cancelWaitingEvents(t, { keep: keepPending }));
}

export const path = receiverPaths("/r");

/** A click through /go; returns its id read from the redirect. */
export async function click(cat: CatalogFixture, query = "", sourceId = cat.trafficSourceId): Promise<string> {
  const res = await t.call({
    method: "GET",
    url: `/go/${cat.linkId}/${sourceId}${query}`,
    headers: { "user-agent": BROWSER },
  });
  expect(res.statusCode, res.body).toBe(302);
  return new URL(String(res.headers.location)).searchParams.get("cid") as string;
}

export const tick = () => t.ctx.delivery.tick();
