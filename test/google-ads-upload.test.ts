import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeClicks } from "../src/features/tracking/index.js";
import { DAY_MS, SECOND_MS } from "../src/platform/durations.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, createVia, seedCatalog } from "./helpers/catalog.js";
import {
  adsBody,
  connectAds,
  type FakeGoogle,
  type GoogleClient,
  getAds,
  type IngestCall,
  newGclid,
  runUpload,
  startAdsApp,
  startFakeGoogle,
} from "./helpers/fake-google.js";
import { clickOf } from "./helpers/reports.js";
import { convert, recordConversion } from "./helpers/webhooks.js";

// Conversions whose click carried a gclid are queued in their own transaction and uploaded by
// the job google-ads-upload to the Data Manager API (a loopback fake of it): batches of at most
// 2,000 events, each event checked first so one bad event does not sink its batch, refusals
// that will not change never retried, and the history listed through /api/v1.

let google: FakeGoogle;
let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let client: GoogleClient;
let accounts = 1000000000;

beforeAll(async () => {
  google = await startFakeGoogle();
  t = await startAdsApp(google);
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  client = google.newClient();
});
afterAll(async () => {
  await t?.close();
  await google?.close();
});

interface AdsSource {
  fixture: CatalogFixture;
  sourceId: number;
  /** Each source uploads to its own Google Ads account, so the fake's calls tell them apart. */
  accountId: string;
}

async function adsSource(name: string, extra: Record<string, unknown> = {}, owner = who): Promise<AdsSource> {
  const sourceId = await createVia(t, owner, "traffic-sources", { name });
  accounts += 1;
  const accountId = String(accounts);
  await connectAds(t, owner, sourceId, adsBody(client, { accountId, ...extra }));
  return { fixture: { ...cat, trafficSourceId: sourceId }, sourceId, accountId };
}

/** The ingest calls made for this Google Ads account. */
const callsFor = (accountId: string): IngestCall[] =>
  google.ingestCalls.filter((c) => c.body.destinations?.[0]?.operatingAccount?.accountId === accountId);

/** A click (with this gclid, if any) on the source, converted; the conversion's id. */
async function conversion(
  fixture: CatalogFixture,
  options: { gclid?: string | null; type?: string; value?: number; currency?: string; occurredAt?: string } = {},
  owner = who,
): Promise<{ id: string; gclid: string | null }> {
  const gclid = options.gclid === undefined ? newGclid() : options.gclid;
  const clickId = await clickThrough(t, fixture, gclid === null ? "" : `?gclid=${encodeURIComponent(gclid)}`);
  const { gclid: _, ...rest } = options;
  const id = await convert(t, owner, { type: "Signup", clickId, ...rest });
  return { id, gclid };
}

const uploadsOf = async (source: AdsSource, query = "") =>
  (await getAds(t, who, source.sourceId, `/uploads${query}`)) as {
    data: { id: string; status: string; events: number; accepted: number; refused: number }[];
    pagination: { total: number };
  };

describe("what is uploaded", () => {
  it("sends a conversion whose click carried a gclid as Google documents the request, once", async () => {
    const source = await adsSource("Ads A", {
      loginAccountId: "999-000-1111",
      consent: { adUserData: "CONSENT_GRANTED", adPersonalization: "CONSENT_DENIED" },
    });
    const gclid = newGclid();
    const clickId = await clickThrough(t, source.fixture, `?gclid=${gclid}`);
    const recorded = await recordConversion(t, who, {
      type: "FirstTimeDeposit",
      clickId,
      value: 25.5,
      currency: "EUR",
    });
    expect((await getAds(t, who, source.sourceId)).data.pendingEvents).toBe(1);

    const tokensBefore = google.tokenRequests.length;
    const summary = await runUpload(t);
    expect(summary).toMatchObject({ uploads: expect.any(Number), accepted: expect.any(Number) });
    const token = google.tokenRequests.slice(tokensBefore).find((f) => f.get("client_id") === client.clientId);
    expect(token?.get("grant_type")).toBe("refresh_token");
    expect(token?.get("refresh_token")).toBe(client.refreshToken);

    const calls = callsFor(source.accountId);
    expect(calls).toHaveLength(1);
    expect(google.issuedTokens.has(calls[0]?.token ?? "")).toBe(true);
    expect(calls[0]?.body).toEqual({
      destinations: [
        {
          reference: "222",
          operatingAccount: { accountType: "GOOGLE_ADS", accountId: source.accountId },
          loginAccount: { accountType: "GOOGLE_ADS", accountId: "9990001111" },
          productDestinationId: "222",
        },
      ],
      consent: { adUserData: "CONSENT_GRANTED", adPersonalization: "CONSENT_DENIED" },
      events: [
        {
          destinationReferences: ["222"],
          transactionId: recorded.id,
          eventTimestamp: recorded.occurredAt,
          eventSource: "WEB",
          adIdentifiers: { gclid },
          conversionValue: 25.5,
          currency: "EUR",
        },
      ],
    });
    expect(google.accepted.has(recorded.id)).toBe(true);

    const uploads = await uploadsOf(source);
    expect(uploads.data).toEqual([
      {
        id: expect.stringMatching(/^gup_/),
        createdAt: t.clock.now().toISOString(),
        status: "Sent",
        events: 1,
        accepted: 1,
        refused: 0,
        attempts: 1,
        nextAttemptAt: null,
        response: expect.objectContaining({ httpStatus: 200, status: "OK", requestId: expect.any(String) }),
      },
    ]);
    const detail = await getAds(t, who, source.sourceId, `/uploads/${uploads.data[0]?.id}`);
    expect(detail.data.items).toEqual([
      {
        conversionId: recorded.id,
        conversionType: "FirstTimeDeposit",
        gclid,
        outcome: "accepted",
        reason: null,
        statusNote: null,
      },
    ]);
    expect((await getAds(t, who, source.sourceId)).data.pendingEvents).toBe(0);

    // Nothing is sent twice.
    await runUpload(t);
    expect(callsFor(source.accountId)).toHaveLength(1);
  });

  it("leaves out conversions of other sources, without a gclid, of an unmapped type or of a disabled integration", async () => {
    const source = await adsSource("Ads B");
    const disabled = await adsSource("Ads B disabled", { enabled: false });
    const plainSourceId = await createVia(t, who, "traffic-sources", { name: "No ads" });
    const plain = { ...cat, trafficSourceId: plainSourceId };

    const left = [
      await conversion(plain),
      await conversion(source.fixture, { gclid: null }),
      await conversion(source.fixture, { type: "Deposit" }),
      await conversion(disabled.fixture),
    ];
    const noClick = await convert(t, who, { type: "Signup" });
    const sent = await conversion(source.fixture);

    await runUpload(t);
    const events = callsFor(source.accountId).flatMap((c) => c.body.events ?? []);
    expect(events.map((e) => e.transactionId)).toEqual([sent.id]);
    expect(callsFor(disabled.accountId)).toEqual([]);
    const queued = await t.ctx.db.query("select 1 from google_ads_items where conversion_id = any($1::text[])", [
      [...left.map((c) => c.id), noClick],
    ]);
    expect(queued).toEqual([]);
  });

  it("uploads another tenant's conversions with that tenant's own integration only", async () => {
    const other = await seedTenancy(t);
    const otherCat = await seedCatalog(t, other);
    const otherSource = await adsSource("Other tenant ads", {}, other);
    const mine = await adsSource("Ads C");
    const theirs = await conversion({ ...otherCat, trafficSourceId: otherSource.sourceId }, {}, other);
    const ours = await conversion(mine.fixture);
    await runUpload(t);
    expect(callsFor(otherSource.accountId).flatMap((c) => c.body.events?.map((e) => e.transactionId))).toEqual([
      theirs.id,
    ]);
    expect(callsFor(mine.accountId).flatMap((c) => c.body.events?.map((e) => e.transactionId))).toEqual([ours.id]);

    // Neither tenant sees the other's uploads, whatever ids it puts in the path.
    const [theirUpload] = (
      await t.call({
        method: "GET",
        url: `/api/v1/traffic-sources/${otherSource.sourceId}/google-ads/uploads`,
        headers: { authorization: other.apiKey },
      })
    ).json().data;
    const [ourUpload] = (await uploadsOf(mine)).data;
    const crossed = await t.call({
      method: "GET",
      url: `/api/v1/traffic-sources/${otherSource.sourceId}/google-ads/uploads/${ourUpload?.id}`,
      headers: { authorization: other.apiKey },
    });
    expect(crossed.statusCode).toBe(404);
    const mixed = await t.call({
      method: "GET",
      url: `/api/v1/traffic-sources/${mine.sourceId}/google-ads/uploads/${theirUpload.id}`,
      headers: { authorization: who.apiKey },
    });
    expect(mixed.statusCode).toBe(404);
  });
});

describe("batches", () => {
  it("hold at most 2,000 events: 2,001 conversions go in two requests", async () => {
    const source = await adsSource("Ads bulk");
    const now = t.clock.now();
    const clicks = Array.from({ length: 2001 }, (_, i) =>
      clickOf({
        id: `clk_gads_bulk_${String(i).padStart(5, "0")}`,
        tenantId: who.tenantId,
        at: new Date(now.getTime() - 60 * SECOND_MS),
        linkId: cat.linkId,
        accountId: cat.accountId,
        brandId: cat.brandId,
        programId: cat.programId,
        trafficSourceId: source.sourceId,
        gclid: `Cj0KbulkGclid${i}`,
      }),
    );
    for (let i = 0; i < clicks.length; i += 500) await writeClicks(t.ctx.db, clicks.slice(i, i + 500), now);
    for (let i = 0; i < clicks.length; i += 1000) {
      const items = clicks.slice(i, i + 1000).map((c) => ({ type: "Signup", clickId: c.id }));
      const res = await t.call({
        method: "POST",
        url: "/api/v1/conversions",
        headers: { authorization: who.apiKey },
        payload: { items },
      });
      expect(res.statusCode, res.body).toBe(201);
    }

    await runUpload(t);
    const sizes = callsFor(source.accountId).map((c) => c.body.events?.length);
    expect(sizes).toEqual([2000, 1]);
    const uploaded = new Set(callsFor(source.accountId).flatMap((c) => c.body.events?.map((e) => e.transactionId)));
    expect(uploaded.size).toBe(2001);
    const uploads = await uploadsOf(source);
    expect(uploads.data.map((u) => [u.status, u.events, u.accepted]).sort()).toEqual([
      ["Sent", 1, 1],
      ["Sent", 2000, 2000],
    ]);
  });
});

describe("refusals", () => {
  it("an invalid event is checked out before sending; the rest of its batch goes", async () => {
    const source = await adsSource("Ads checked");
    const good = await conversion(source.fixture);
    const dotted = await conversion(source.fixture, { gclid: "not.a.gclid" });
    const before = await conversion(source.fixture, {
      occurredAt: new Date(t.clock.now().getTime() - 3_600_000).toISOString(),
    });
    await runUpload(t);
    const calls = callsFor(source.accountId);
    expect(calls.map((c) => c.body.events?.map((e) => e.transactionId))).toEqual([[good.id]]);
    const [upload] = (await uploadsOf(source)).data;
    expect(upload).toMatchObject({ status: "Partly", events: 3, accepted: 1, refused: 2 });
    const detail = await getAds(t, who, source.sourceId, `/uploads/${upload?.id}`);
    const outcomes = Object.fromEntries(
      detail.data.items.map((i: { conversionId: string; outcome: string; reason: string | null }) => [
        i.conversionId,
        [i.outcome, i.reason],
      ]),
    );
    expect(outcomes[good.id]).toEqual(["accepted", null]);
    expect(outcomes[dotted.id]).toEqual(["refused", expect.stringMatching(/gclid/)]);
    expect(outcomes[before.id]).toEqual(["refused", expect.stringMatching(/before its click/)]);
  });

  it("an event Google refuses is refused with Google's reason, the rest resent, and it is never retried", async () => {
    const source = await adsSource("Ads refused");
    const accepted = await conversion(source.fixture);
    const refusedGclid = newGclid();
    google.refuseGclid(refusedGclid, "The click is older than the conversion action's click-through window.");
    const refused = await conversion(source.fixture, { gclid: refusedGclid });
    await runUpload(t);

    const calls = callsFor(source.accountId);
    expect(calls.map((c) => [c.httpStatus, c.body.events?.length])).toEqual([
      [400, 2],
      [200, 1],
    ]);
    expect(google.accepted.has(accepted.id)).toBe(true);
    expect(google.accepted.has(refused.id)).toBe(false);
    const [upload] = (await uploadsOf(source)).data;
    expect(upload).toMatchObject({ status: "Partly", accepted: 1, refused: 1, nextAttemptAt: null });
    const detail = await getAds(t, who, source.sourceId, `/uploads/${upload?.id}`);
    const item = detail.data.items.find((i: { conversionId: string }) => i.conversionId === refused.id);
    expect(item).toMatchObject({ outcome: "refused", reason: expect.stringContaining("click-through window") });

    t.clock.advance(31 * 60 * SECOND_MS);
    await runUpload(t);
    expect(callsFor(source.accountId)).toHaveLength(2);
    // A refusal is not a failure of the integration: no issue.
    const issues = await t.ctx.db.query("select 1 from account_issues where kind = 'google_ads_upload_failed'");
    expect(issues).toEqual([]);
  });
});

describe("the upload history", () => {
  it("lists uploads newest first, paged and filtered by status", async () => {
    const source = await adsSource("Ads history");
    const step = async () => {
      await runUpload(t);
      t.clock.advance(SECOND_MS);
    };
    await conversion(source.fixture);
    await step(); // Sent
    await conversion(source.fixture);
    await conversion(source.fixture, { gclid: "bad gclid!" });
    await step(); // Partly
    await conversion(source.fixture, { gclid: "also bad!" });
    await step(); // Failed: nothing valid to send
    google.failIngest({ httpStatus: 503, status: "UNAVAILABLE", message: "The service is currently unavailable." });
    await conversion(source.fixture);
    await step(); // Retrying

    const all = await uploadsOf(source);
    expect(all.data.map((u) => u.status)).toEqual(["Retrying", "Failed", "Partly", "Sent"]);
    expect(all.pagination.total).toBe(4);
    expect(all.data[1]).toMatchObject({ events: 1, accepted: 0, refused: 1, response: null });

    const page = await uploadsOf(source, "?limit=2&offset=1");
    expect(page.data.map((u) => u.status)).toEqual(["Failed", "Partly"]);
    expect(page.pagination).toEqual({ offset: 1, limit: 2, total: 4 });

    for (const status of ["Sent", "Partly", "Failed", "Retrying"]) {
      const filtered = await uploadsOf(source, `?status=${status}`);
      expect(filtered.data.map((u) => u.status)).toEqual([status]);
    }
    const retrying = await getAds(t, who, source.sourceId, `/uploads/${all.data[0]?.id}`);
    expect(retrying.data).toMatchObject({
      status: "Retrying",
      nextAttemptAt: expect.any(String),
      response: { httpStatus: 503, status: "UNAVAILABLE" },
      items: [expect.objectContaining({ outcome: "pending", reason: null })],
    });

    const bad = await t.call({
      method: "GET",
      url: `/api/v1/traffic-sources/${source.sourceId}/google-ads/uploads?status=Done`,
      headers: { authorization: who.apiKey },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain("status");
    const missing = await t.call({
      method: "GET",
      url: `/api/v1/traffic-sources/${source.sourceId}/google-ads/uploads/gup_nope`,
      headers: { authorization: who.apiKey },
    });
    expect(missing.statusCode).toBe(404);
  });

  // Moves the clock 91 days: last in this file.
  it("a click older than the conversion window is refused and never sent", async () => {
    const source = await adsSource("Ads old click");
    const gclid = newGclid();
    const clickId = await clickThrough(t, source.fixture, `?gclid=${gclid}`);
    t.clock.advance(91 * DAY_MS);
    const id = await convert(t, who, { type: "Signup", clickId });
    await runUpload(t);
    expect(callsFor(source.accountId)).toEqual([]);
    const [upload] = (await uploadsOf(source)).data;
    expect(upload).toMatchObject({ status: "Failed", events: 1, accepted: 0, refused: 1 });
    const detail = await getAds(t, who, source.sourceId, `/uploads/${upload?.id}`);
    expect(detail.data.items).toEqual([
      expect.objectContaining({ conversionId: id, outcome: "refused", reason: expect.stringMatching(/90 days/) }),
    ]);
  });
});

describe("history retention", () => {
  it("purges uploads with their items 120 days on", async () => {
    const source = await adsSource("Ads retention");
    await conversion(source.fixture);
    const start = t.clock.now();
    await runUpload(t);
    const [upload, ...more] = (await uploadsOf(source)).data;
    expect(more).toEqual([]);
    expect(upload).toMatchObject({ status: "Sent", events: 1 });

    const job = t.ctx.jobs.find("retention");
    if (!job) throw new Error("no retention job");
    await job.run(new Date(start.getTime() + 119 * DAY_MS));
    expect((await uploadsOf(source)).data).toHaveLength(1);
    await job.run(new Date(start.getTime() + 121 * DAY_MS));
    expect((await uploadsOf(source)).data).toEqual([]);
    const [items] = await t.ctx.db.query<{ n: number }>(
      "select count(*)::int as n from google_ads_items where upload_id = $1",
      [upload?.id],
    );
    expect(items?.n).toBe(0);
  });
});
