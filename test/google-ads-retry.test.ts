import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../src/platform/durations.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, createVia, seedCatalog } from "./helpers/catalog.js";
import {
  adsBody,
  connectAds,
  type FakeFailure,
  type FakeGoogle,
  type GoogleClient,
  getAds,
  type IngestCall,
  newGclid,
  putAds,
  runUpload,
  startAdsApp,
  startFakeGoogle,
} from "./helpers/fake-google.js";
import { convert, issuesOf, mailsAbout } from "./helpers/webhooks.js";

// A failed upload (network, 5xx, 429, token refresh) is tried again every 30 minutes while its
// clicks are inside their window, and an integration whose uploads keep failing raises
// 'Google Ads Upload Failed' (mail and the issue.opened operational event), closed by the next
// accepted upload. The clock is the app's manual clock; the job runs through the admin surface.

let google: FakeGoogle;
let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let accounts = 2000000000;

beforeAll(async () => {
  google = await startFakeGoogle();
  t = await startAdsApp(google, { env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" } });
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
});
afterAll(async () => {
  await t?.close();
  await google?.close();
});

interface AdsSource {
  fixture: CatalogFixture;
  sourceId: number;
  accountId: string;
  client: GoogleClient;
}

async function adsSource(name: string): Promise<AdsSource> {
  const sourceId = await createVia(t, who, "traffic-sources", { name });
  accounts += 1;
  const accountId = String(accounts);
  const client = google.newClient();
  await connectAds(t, who, sourceId, adsBody(client, { accountId }));
  return { fixture: { ...cat, trafficSourceId: sourceId }, sourceId, accountId, client };
}

/** Token exchanges made with this client. */
const tokenRequestsOf = (client: GoogleClient) =>
  google.tokenRequests.filter((form) => form.get("client_id") === client.clientId).length;
const callsFor = (accountId: string): IngestCall[] =>
  google.ingestCalls.filter((c) => c.body.destinations?.[0]?.operatingAccount?.accountId === accountId);
const sentIds = (accountId: string) =>
  callsFor(accountId).flatMap((c) => (c.body.events ?? []).map((e) => e.transactionId));

async function conversion(fixture: CatalogFixture): Promise<string> {
  const clickId = await clickThrough(t, fixture, `?gclid=${newGclid()}`);
  return convert(t, who, { type: "Signup", clickId });
}

async function uploads(source: AdsSource) {
  return (await getAds(t, who, source.sourceId, "/uploads")).data as {
    id: string;
    status: string;
    attempts: number;
    nextAttemptAt: string | null;
    response: { httpStatus: number | null; status: string | null; message: string | null } | null;
  }[];
}

describe("retries", () => {
  it("a failed upload is tried again 30 minutes later, and new conversions wait for it", async () => {
    const source = await adsSource("Retry 503");
    const first = await conversion(source.fixture);
    google.failIngest({ httpStatus: 503, status: "UNAVAILABLE", message: "The service is currently unavailable." });
    const failedAt = t.clock.now();
    await runUpload(t);
    let [upload] = await uploads(source);
    expect(upload).toMatchObject({
      status: "Retrying",
      attempts: 1,
      nextAttemptAt: new Date(failedAt.getTime() + 30 * MINUTE_MS).toISOString(),
      response: { httpStatus: 503, status: "UNAVAILABLE" },
    });

    const second = await conversion(source.fixture);
    t.clock.advance(29 * MINUTE_MS);
    await runUpload(t);
    expect(callsFor(source.accountId)).toHaveLength(1);

    t.clock.advance(MINUTE_MS);
    await runUpload(t);
    expect(sentIds(source.accountId)).toEqual([first, first, second]);
    const all = await uploads(source);
    expect(all.map((u) => [u.status, u.attempts])).toEqual([
      ["Sent", 1],
      ["Sent", 2],
    ]);
    [upload] = all.slice(1);
    expect(upload?.nextAttemptAt).toBeNull();
    // Three requests, one access token: it is kept (in memory) while it lives.
    expect(tokenRequestsOf(source.client)).toBe(1);
  });

  const failures: [string, (source: AdsSource) => void, string][] = [
    [
      "quota (429 RESOURCE_EXHAUSTED)",
      () => google.failIngest({ httpStatus: 429, status: "RESOURCE_EXHAUSTED", message: "Quota exceeded." }),
      "RESOURCE_EXHAUSTED",
    ],
    ["a reset connection", () => google.failIngest("reset"), "NETWORK_ERROR"],
    ["a revoked refresh token", (source) => google.revoke(source.client.refreshToken), "invalid_grant"],
    [
      "the token endpoint failing",
      () => google.failToken({ httpStatus: 500, status: "INTERNAL", message: "Internal error." } as FakeFailure),
      "TOKEN_REFRESH_FAILED",
    ],
    [
      "an expired access token (401 UNAUTHENTICATED)",
      () =>
        google.failIngest({ httpStatus: 401, status: "UNAUTHENTICATED", message: "Request had invalid credentials." }),
      "UNAUTHENTICATED",
    ],
  ];

  it.each(failures)("%s is retried 30 minutes later", async (_label, fail, status) => {
    const source = await adsSource(`Retry ${status}`);
    const id = await conversion(source.fixture);
    fail(source);
    await runUpload(t);
    const [upload] = await uploads(source);
    expect(upload).toMatchObject({ status: "Retrying", response: { status } });
    const detail = await getAds(t, who, source.sourceId, `/uploads/${upload?.id}`);
    expect(detail.data.items).toEqual([expect.objectContaining({ conversionId: id, outcome: "pending" })]);

    // Fixed (new credentials where the old were revoked): the retry goes through.
    if (status === "invalid_grant") {
      const fresh = google.newClient();
      await connectAds(t, who, source.sourceId, adsBody(fresh, { accountId: source.accountId }));
    }
    t.clock.advance(30 * MINUTE_MS);
    await runUpload(t);
    expect(google.accepted.has(id)).toBe(true);
    expect((await uploads(source))[0]).toMatchObject({ status: "Sent", attempts: 2 });
    // A token Google refused (401) is not used again.
    if (status === "UNAUTHENTICATED") expect(tokenRequestsOf(source.client)).toBe(2);
  });

  it("stops at the click's window: what cannot be retried inside it is refused", async () => {
    const source = await adsSource("Retry window");
    const clickId = await clickThrough(t, source.fixture, `?gclid=${newGclid()}`);
    t.clock.advance(89 * DAY_MS + 23 * HOUR_MS + 15 * MINUTE_MS);
    const id = await convert(t, who, { type: "Signup", clickId });
    const unavailable = { httpStatus: 503, status: "UNAVAILABLE", message: "Backend unavailable." };
    google.failIngest(unavailable, unavailable);

    await runUpload(t);
    expect((await uploads(source))[0]).toMatchObject({ status: "Retrying", attempts: 1 });
    // The retry at 89 days 23:45 fails too; the next would fall after the 90 days.
    t.clock.advance(30 * MINUTE_MS);
    await runUpload(t);
    const [upload] = await uploads(source);
    expect(upload).toMatchObject({ status: "Failed", attempts: 2, nextAttemptAt: null });
    const detail = await getAds(t, who, source.sourceId, `/uploads/${upload?.id}`);
    expect(detail.data.items).toEqual([
      expect.objectContaining({ conversionId: id, outcome: "refused", reason: expect.stringMatching(/window/) }),
    ]);
    t.clock.advance(30 * MINUTE_MS);
    await runUpload(t);
    expect(callsFor(source.accountId)).toHaveLength(2);
    expect(google.accepted.has(id)).toBe(false);
  });
});

describe("'Google Ads Upload Failed'", () => {
  it("opens after three failed attempts in a row (mail and issue.opened), closes on the next accepted upload", async () => {
    const source = await adsSource("Failing source");
    const ops = await t.call({
      method: "POST",
      url: "/api/v1/notifications/webhooks",
      headers: { authorization: who.apiKey },
      payload: { url: `${google.base}/ops`, events: ["issue.opened", "issue.closed"] },
    });
    expect(ops.statusCode, ops.body).toBe(201);
    const failureIssues = async () =>
      (await issuesOf(t, who, "google_ads_upload_failed")).filter((i) => i.subject.id === String(source.sourceId));

    const id = await conversion(source.fixture);
    google.revoke(source.client.refreshToken);
    for (let attempt = 1; attempt <= 2; attempt++) {
      await runUpload(t);
      expect(await failureIssues()).toEqual([]);
      t.clock.advance(30 * MINUTE_MS);
    }
    await runUpload(t);
    const [issue] = await failureIssues();
    expect(issue).toMatchObject({
      status: "open",
      severity: "error",
      title: "Google Ads Upload Failed: Failing source",
      subject: { type: "traffic_source", id: String(source.sourceId), name: "Failing source" },
      details: expect.objectContaining({ status: "invalid_grant", failedAttempts: 3 }),
    });
    expect(JSON.stringify(issue)).not.toContain(source.client.refreshToken);
    const mails = await mailsAbout(t, who.tenantId, "Google Ads Upload Failed");
    expect(mails.map((m) => m.subject)).toEqual([expect.stringMatching(/^\[error\] Opened: Google Ads Upload Failed/)]);
    const deliveries = async () =>
      (
        await t.call({
          method: "GET",
          url: `/api/v1/notifications/webhooks/${ops.json().data.id}/deliveries`,
          headers: { authorization: who.apiKey },
        })
      ).json().data as { type: string; payload: { data: { kind?: string } } }[];
    expect((await deliveries()).map((d) => [d.type, d.payload.data.kind])).toEqual([
      ["issue.opened", "google_ads_upload_failed"],
    ]);

    // New credentials: the next retry is accepted and the issue resolved.
    const fresh = google.newClient();
    const put = await putAds(t, who, source.sourceId, adsBody(fresh, { accountId: source.accountId }));
    expect(put.statusCode, put.body).toBe(200);
    t.clock.advance(30 * MINUTE_MS);
    await runUpload(t);
    expect(google.accepted.has(id)).toBe(true);
    const [closed] = await failureIssues();
    expect(closed?.status).toBe("closed");
    expect((await deliveries()).map((d) => d.type).sort()).toEqual(["issue.closed", "issue.opened"]);
  });
});
