import { expect } from "vitest";
import { type SourcePostbackWorker, sourcePostbackWorker } from "../../src/features/source-postbacks/index.js";
import type { TestApp } from "./app.js";
import type { CatalogFixture } from "./catalog.js";
import { BROWSER } from "./webhook-delivery.js";
import { type Caller, startWebhookTestApp } from "./webhooks.js";

/**
 * Traffic-source postbacks through the API (docs/traffic-source-postbacks.md), against a loopback
 * receiver (receiver.ts). The worker is the feature's own, ticked by hand on the app's clock.
 */

const headersOf = (who: Caller) => ({ authorization: typeof who === "string" ? who : who.apiKey });

/** An app whose loopback receiver is allowed, clicks held until a conversion needs them, and its postback worker. */
export async function startPostbackApp(env: Record<string, string> = {}): Promise<{
  t: TestApp;
  worker: SourcePostbackWorker;
}> {
  const t = await startWebhookTestApp({ env, app: { clicks: { intervalMs: 3_600_000 } } });
  const worker = sourcePostbackWorker({ db: t.ctx.db, clock: t.ctx.clock, log: t.app.log, config: t.ctx.config });
  return { t, worker };
}

/** Cancels the postbacks still waiting: a tick claims those of every tenant, so none outlives its test. */
export async function cancelWaitingPostbacks(t: TestApp): Promise<void> {
  await t.ctx.db.query(
    "update source_postbacks set status = 'Cancelled' where status in ('Queued', 'Retrying', 'Paused')",
  );
}

export function patchSource(t: TestApp, who: Caller, sourceId: number, payload: Record<string, unknown>) {
  return t.call({
    method: "PATCH",
    url: `/api/v1/traffic-sources/${sourceId}`,
    headers: headersOf(who),
    payload,
  });
}

/** Sets the source's click-id parameter and postback; throws unless 200. */
export async function setPostback(
  t: TestApp,
  who: Caller,
  sourceId: number,
  clickIdParam: string | null,
  postback: Record<string, unknown> | null,
): Promise<Record<string, unknown>> {
  const res = await patchSource(t, who, sourceId, { clickIdParam, postback });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** A click through /go on `sourceId`; returns its id read from the redirect. */
export async function clickOn(t: TestApp, cat: CatalogFixture, sourceId: number, query = ""): Promise<string> {
  const res = await t.call({
    method: "GET",
    url: `/go/${cat.linkId}/${sourceId}${query}`,
    headers: { "user-agent": BROWSER },
  });
  expect(res.statusCode, res.body).toBe(302);
  return new URL(String(res.headers.location)).searchParams.get("cid") as string;
}

export interface PostbackItem {
  id: string;
  conversionId: string;
  status: string;
  attempts: number;
  lastAttemptAt: string | null;
  createdAt: string;
}

export function getPostbacks(t: TestApp, who: Caller, sourceId: number, query = "") {
  return t.call({
    method: "GET",
    url: `/api/v1/traffic-sources/${sourceId}/postbacks${query}`,
    headers: headersOf(who),
  });
}

/** `query` is the whole query string, `?` included. */
export async function postbacksOf(t: TestApp, who: Caller, sourceId: number, query = ""): Promise<PostbackItem[]> {
  const res = await getPostbacks(t, who, sourceId, query);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

export async function postbackAttempts(t: TestApp, who: Caller, sourceId: number, postbackId: string) {
  const res = await t.call({
    method: "GET",
    url: `/api/v1/traffic-sources/${sourceId}/postbacks/${postbackId}/attempts`,
    headers: headersOf(who),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as {
    attempt: number;
    urlTemplate: string;
    method: string;
    response: { status: number } | null;
    errorType: string | null;
    error: string | null;
  }[];
}

export function resendPostback(t: TestApp, who: Caller, sourceId: number, postbackId: string) {
  return t.call({
    method: "POST",
    url: `/api/v1/traffic-sources/${sourceId}/postbacks/${postbackId}/resend`,
    headers: headersOf(who),
  });
}
