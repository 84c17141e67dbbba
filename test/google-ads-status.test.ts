import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { googleAdsStatusHook } from "../src/features/google-ads/index.js";
import { DAY_MS, MINUTE_MS } from "../src/platform/durations.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, createVia, seedCatalog } from "./helpers/catalog.js";
import {
  adsBody,
  connectAds,
  type FakeGoogle,
  type GoogleClient,
  getAds,
  newGclid,
  runUpload,
  startAdsApp,
  startFakeGoogle,
} from "./helpers/fake-google.js";
import { recordConversion } from "./helpers/webhooks.js";

// The Google Ads side of the conversion lifecycle (docs/google-ads.md "Conversion statuses"): a
// conversion rejected or reversed before its upload is never sent (withdrawn), one reversed after
// Google accepted it is noted in the history as not told (the Data Manager API takes no
// retractions), and one approved later is queued and sent. Real HTTP through the app to the
// loopback Google, on PGlite and PostgreSQL.

let google: FakeGoogle;
let gate: Gate;
let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let client: GoogleClient;
let accounts = 2000000000;

/**
 * A loopback hop in front of the fake Google that can hold the next events:ingest request until
 * released, so a status can change while an upload is on its way.
 */
interface Gate {
  readonly base: string;
  /** Holds the next ingest request; resolves when it has arrived (held). */
  holdNext(): Promise<void>;
  /** Lets the held request through to Google. */
  release(): void;
  close(): Promise<void>;
}

async function startGate(target: string): Promise<Gate> {
  let arm: { arrived: () => void; released: Promise<void> } | null = null;
  let release = () => {};
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      void (async () => {
        const held = request.url?.startsWith("/v1/events:ingest") ? arm : null;
        if (held) {
          arm = null;
          held.arrived();
          await held.released;
        }
        const answer = await fetch(`${target}${request.url ?? ""}`, {
          method: request.method ?? "GET",
          headers: {
            "content-type": String(request.headers["content-type"] ?? "application/json"),
            authorization: String(request.headers.authorization ?? ""),
          },
          body: request.method === "GET" ? null : Buffer.concat(chunks),
        });
        response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "" });
        response.end(Buffer.from(await answer.arrayBuffer()));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holdNext() {
      return new Promise<void>((arrived) => {
        let letGo = () => {};
        const released = new Promise<void>((resolve) => {
          letGo = resolve;
        });
        release = letGo;
        arm = { arrived, released };
      });
    },
    release: () => release(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

beforeAll(async () => {
  google = await startFakeGoogle();
  gate = await startGate(google.base);
  t = await startAdsApp(google, { env: { GOOGLE_DATA_MANAGER_URL: gate.base } });
  // app.ts registers it with the other status hooks; until it does, the test does.
  if (!t.ctx.tracking.statusHooks.includes(googleAdsStatusHook)) t.ctx.tracking.statusHooks.push(googleAdsStatusHook);
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  client = google.newClient();
});
afterAll(async () => {
  await t?.close();
  await gate?.close();
  await google?.close();
});

interface AdsSource {
  fixture: CatalogFixture;
  sourceId: number;
  accountId: string;
}

async function adsSource(name: string): Promise<AdsSource> {
  const sourceId = await createVia(t, who, "traffic-sources", { name });
  accounts += 1;
  const accountId = String(accounts);
  await connectAds(t, who, sourceId, adsBody(client, { accountId }));
  return { fixture: { ...cat, trafficSourceId: sourceId }, sourceId, accountId };
}

/** The transaction ids sent to this Google Ads account, in every request. */
const sentTo = (source: AdsSource): string[] =>
  google.ingestCalls
    .filter((c) => c.body.destinations?.[0]?.operatingAccount?.accountId === source.accountId)
    .flatMap((c) => (c.body.events ?? []).map((e) => e.transactionId ?? ""));

/** A click with a gclid on the source, converted (a Signup, with these fields); its id. */
async function conversion(source: AdsSource, fields: Record<string, unknown> = {}): Promise<string> {
  const clickId = await clickThrough(t, source.fixture, `?gclid=${newGclid()}`);
  return (await recordConversion(t, who, { type: "Signup", clickId, ...fields })).id;
}

async function setStatus(id: string, status: string, reason?: string): Promise<void> {
  const res = await t.call({
    method: "PATCH",
    url: `/api/v1/conversions/${id}`,
    headers: { authorization: who.apiKey },
    payload: reason === undefined ? { status } : { status, reason },
  });
  expect(res.statusCode, res.body).toBe(200);
}

interface Item {
  conversionId: string;
  outcome: string;
  reason: string | null;
  statusNote: string | null;
}

const queueOf = async (source: AdsSource, query = ""): Promise<Item[]> =>
  (await getAds(t, who, source.sourceId, `/queue${query}`)).data;

const uploadsOf = async (source: AdsSource): Promise<{ id: string; status: string; events: number }[]> =>
  (await getAds(t, who, source.sourceId, "/uploads")).data;

async function itemsOfUpload(source: AdsSource, uploadId: string): Promise<Item[]> {
  return (await getAds(t, who, source.sourceId, `/uploads/${uploadId}`)).data.items;
}

/** Every item of every upload of the source, by conversion id. */
async function uploadedItems(source: AdsSource): Promise<Map<string, Item>> {
  const items = new Map<string, Item>();
  for (const upload of await uploadsOf(source)) {
    for (const item of await itemsOfUpload(source, upload.id)) items.set(item.conversionId, item);
  }
  return items;
}

const today = () => t.clock.now().toISOString().slice(0, 10);

describe("before the upload", () => {
  it("does not queue a conversion recorded rejected or reversed", async () => {
    const source = await adsSource("Recorded rejected");
    const rejected = await conversion(source, { status: "rejected" });
    const reversed = await conversion(source, { status: "reversed" });
    const pending = await conversion(source, { status: "pending" });

    expect(await queueOf(source)).toEqual([expect.objectContaining({ conversionId: pending, outcome: "pending" })]);
    expect((await getAds(t, who, source.sourceId)).data.pendingEvents).toBe(1);
    await runUpload(t);
    expect(sentTo(source)).toEqual([pending]);
    expect(sentTo(source)).not.toContain(rejected);
    expect(sentTo(source)).not.toContain(reversed);
  });

  it("withdraws a queued conversion rejected before its upload: never sent, shown withdrawn", async () => {
    const source = await adsSource("Rejected before upload");
    const rejected = await conversion(source);
    const kept = await conversion(source);
    expect((await getAds(t, who, source.sourceId)).data.pendingEvents).toBe(2);

    await setStatus(rejected, "rejected", "fraud");
    expect((await getAds(t, who, source.sourceId)).data.pendingEvents).toBe(1);
    const queue = await queueOf(source);
    expect(queue.find((i) => i.conversionId === rejected)).toEqual({
      conversionId: rejected,
      conversionType: "Signup",
      gclid: expect.any(String),
      createdAt: expect.any(String),
      outcome: "withdrawn",
      reason: `Rejected on ${today()} before its upload (fraud): not sent`,
      statusNote: null,
    });
    expect(await queueOf(source, "?outcome=withdrawn")).toEqual([expect.objectContaining({ conversionId: rejected })]);

    await runUpload(t);
    await runUpload(t);
    expect(sentTo(source)).toEqual([kept]);
    expect(google.accepted.has(rejected)).toBe(false);
    // Still listed as withdrawn, in no upload.
    expect(await queueOf(source)).toEqual([
      expect.objectContaining({
        conversionId: rejected,
        outcome: "withdrawn",
        reason: expect.stringContaining("fraud"),
      }),
    ]);
    const [upload] = await uploadsOf(source);
    expect(await itemsOfUpload(source, upload?.id ?? "")).toEqual([
      expect.objectContaining({ conversionId: kept, outcome: "accepted", statusNote: null }),
    ]);

    // A conversion's page lists its Google Ads delivery: the upload's id once sent, its own while withdrawn.
    const deliveries = async (id: string) => {
      const res = await t.call({
        method: "GET",
        url: `/api/v1/conversions/${id}/deliveries`,
        headers: { authorization: who.apiKey },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data;
    };
    expect(await deliveries(kept)).toEqual([
      expect.objectContaining({
        destination: "googleAds",
        target: { id: String(source.sourceId), name: "Rejected before upload" },
        id: upload?.id,
        status: "accepted",
        attempts: 1,
      }),
    ]);
    expect(await deliveries(rejected)).toEqual([
      expect.objectContaining({ destination: "googleAds", id: rejected, status: "withdrawn", attempts: 0 }),
    ]);
  });

  it("does not claim an integration whose queue holds withdrawn conversions only", async () => {
    const source = await adsSource("Only withdrawn");
    const id = await conversion(source);
    await setStatus(id, "reversed");
    await runUpload(t);
    expect(sentTo(source)).toEqual([]);
    expect(await uploadsOf(source)).toEqual([]);
  });

  it("takes a conversion rejected while its upload waits for a retry out of the retry", async () => {
    const source = await adsSource("Rejected during retry");
    const rejected = await conversion(source);
    const other = await conversion(source);
    google.failIngest({ httpStatus: 503, status: "UNAVAILABLE", message: "The service is currently unavailable." });
    await runUpload(t);
    const [failed] = await uploadsOf(source);
    expect(failed).toMatchObject({ status: "Retrying", events: 2 });

    await setStatus(rejected, "rejected");
    const on = today();
    t.clock.advance(31 * MINUTE_MS);
    await runUpload(t);
    // The retry sent the other one only (the failed attempt had held both).
    expect(sentTo(source)).toEqual([rejected, other, other]);
    expect(google.accepted.has(rejected)).toBe(false);
    const items = await itemsOfUpload(source, failed?.id ?? "");
    expect(items.find((i) => i.conversionId === rejected)).toMatchObject({
      outcome: "withdrawn",
      reason: `Rejected on ${on} before its upload: not sent again`,
    });
    expect(items.find((i) => i.conversionId === other)).toMatchObject({ outcome: "accepted" });
    expect((await uploadsOf(source))[0]).toMatchObject({ status: "Sent", events: 2 });
  });
});

describe("after the upload", () => {
  it("notes on an accepted conversion reversed later that Google was not told, and sends nothing", async () => {
    const source = await adsSource("Reversed after upload");
    const id = await conversion(source, { value: 50, currency: "EUR" });
    await runUpload(t);
    expect(google.accepted.has(id)).toBe(true);
    const calls = google.ingestCalls.length;

    await setStatus(id, "reversed", "chargeback");
    await runUpload(t);
    expect(google.ingestCalls.length).toBe(calls);
    const item = (await uploadedItems(source)).get(id);
    expect(item).toMatchObject({
      outcome: "accepted",
      reason: null,
      statusNote:
        `Reversed on ${today()} (chargeback): Google was not told; the Data Manager API takes no retractions. ` +
        "Retract it in Google Ads (an adjustment of type RETRACTION)",
    });

    // Approved again: still nothing sent (Google has it), and the note says so.
    await setStatus(id, "approved");
    await runUpload(t);
    expect(google.ingestCalls.length).toBe(calls);
    const again = (await uploadedItems(source)).get(id);
    expect(again?.statusNote).toMatch(
      /^Approved again on .*: Google was not told .*unless it was retracted in Google Ads$/,
    );
  });

  it("notes a conversion reversed while its upload was on its way, which Google accepted", async () => {
    const source = await adsSource("Reversed in flight");
    const id = await conversion(source);
    const held = gate.holdNext();
    const round = runUpload(t);
    await held;
    // Google has the request, not yet answered: the conversion is reversed meanwhile.
    await setStatus(id, "reversed", "refunded");
    gate.release();
    await round;
    expect(google.accepted.has(id)).toBe(true);
    const [upload] = await uploadsOf(source);
    expect(upload).toMatchObject({ status: "Sent", events: 1 });
    expect(await itemsOfUpload(source, upload?.id ?? "")).toEqual([
      expect.objectContaining({
        conversionId: id,
        outcome: "accepted",
        statusNote: expect.stringMatching(/^Reversed on .* \(refunded\): Google was not told; .*RETRACTION\)$/),
      }),
    ]);
    expect(await queueOf(source)).toEqual([]);
  });
});

describe("approved later", () => {
  it("queues and sends a conversion recorded rejected once it is approved", async () => {
    const source = await adsSource("Approved later");
    const externalId = `ext-${newGclid().slice(-16)}`;
    const clickId = await clickThrough(t, source.fixture, `?gclid=${newGclid()}`);
    const first = await recordConversion(t, who, { type: "Signup", clickId, externalId, status: "rejected" });
    expect(await queueOf(source)).toEqual([]);

    // A repeat of its externalId with another status changes it (as a postback's would).
    const repeat = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { type: "Signup", clickId, externalId, status: "approved" },
    });
    expect(repeat.statusCode, repeat.body).toBe(200);
    expect(repeat.json().data).toMatchObject({ id: first.id, statusChanged: true });
    expect(await queueOf(source)).toEqual([
      expect.objectContaining({ conversionId: first.id, outcome: "pending", reason: null }),
    ]);
    await runUpload(t);
    expect(sentTo(source)).toEqual([first.id]);
    expect(google.accepted.has(first.id)).toBe(true);
  });

  it("queues a withdrawn conversion again when it is approved inside the click window", async () => {
    const source = await adsSource("Withdrawn then approved");
    const id = await conversion(source);
    await setStatus(id, "rejected", "duplicate lead");
    await runUpload(t);
    expect(sentTo(source)).toEqual([]);

    await setStatus(id, "pending", "under review");
    expect(await queueOf(source)).toEqual([
      expect.objectContaining({ conversionId: id, outcome: "pending", reason: null, statusNote: null }),
    ]);
    await runUpload(t);
    expect(sentTo(source)).toEqual([id]);
    expect((await uploadedItems(source)).get(id)).toMatchObject({ outcome: "accepted", statusNote: null });
  });

  it("leaves a withdrawn conversion approved after its click's 90 days withdrawn, saying why", async () => {
    const source = await adsSource("Approved too late");
    const id = await conversion(source);
    await setStatus(id, "rejected");
    t.clock.advance(91 * DAY_MS);
    await setStatus(id, "approved");
    const [item] = await queueOf(source);
    expect(item).toMatchObject({
      conversionId: id,
      outcome: "withdrawn",
      reason: expect.stringMatching(/^Approved on .*not queued again: its click is older than .*\(90 days\)$/),
    });
    await runUpload(t);
    expect(sentTo(source)).toEqual([]);
  });
});
