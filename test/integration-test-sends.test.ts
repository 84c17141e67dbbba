/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: postback URL templates use the ${name} placeholder syntax */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { adsBody, adsPath, connectAds, type FakeGoogle, startFakeGoogle } from "./helpers/fake-google.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import { patchSource, setPostback } from "./helpers/source-postbacks.js";
import {
  receiverPaths,
  seedTenantWithCatalog,
  signInPerson,
  startWebhookTestApp,
  type TenantWithCatalog,
} from "./helpers/webhooks.js";

// The test buttons of every integration (docs/traffic-source-postbacks.md, google-ads.md,
// notifications.md): a sample sent now to a loopback receiver or the fake Google, answered with
// what went and what came back, secrets masked, and nothing recorded.

let t: TestApp;
let rx: Receiver;
let google: FakeGoogle;
let tenant: TenantWithCatalog;
let other: TenantWithCatalog;
const path = receiverPaths("/test-sends/");

beforeAll(async () => {
  rx = await startReceiver();
  google = await startFakeGoogle();
  t = await startWebhookTestApp({ env: { ...google.env, SIMULATE_PER_WEBHOOK_PER_MINUTE: "5" } });
  tenant = await seedTenantWithCatalog(t);
  other = await seedTenantWithCatalog(t);
});
afterAll(async () => {
  await t.close();
  await rx.close();
  await google.close();
});

const auth = (who: Tenancy | string) => ({ authorization: typeof who === "string" ? who : who.apiKey });
const post = (who: Tenancy | string, url: string) => t.call({ method: "POST", url, headers: auth(who) });

/** Rows any test send could have written for the tenant: none may appear. */
async function recorded(tenantId: string): Promise<Record<string, number>> {
  const tables = [
    "conversions",
    "source_postbacks",
    "source_postback_attempts",
    "webhook_events",
    "webhook_usage",
    "google_ads_items",
    "google_ads_uploads",
    "notification_messages",
    "notification_attempts",
  ];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const [row] = await t.ctx.db.query<{ n: number }>(`select count(*)::int as n from ${table} where tenant_id = $1`, [
      tenantId,
    ]);
    counts[table] = row?.n ?? -1;
  }
  return counts;
}

async function auditActions(tenantId: string, action: string): Promise<Record<string, unknown>[]> {
  const rows = await t.ctx.db.query<{ details: Record<string, unknown> }>(
    "select details from audit_log where tenant_id = $1 and action = $2 order by at",
    [tenantId, action],
  );
  return rows.map((r) => r.details);
}

const postbackTest = (who: Tenancy | string, sourceId: number) =>
  post(who, `/api/v1/traffic-sources/${sourceId}/postback/test`);

describe("POST /traffic-sources/{id}/postback/test", () => {
  it("sends a marked sample to the postback URL, answers the request with its secrets masked and the reply, and records nothing", async () => {
    const { who, cat } = tenant;
    const at = path("ok");
    rx.on(at, { status: 200, body: "OK received" });
    const token = "nt_9f8e7d6c5b4a39281706f5e4d3c2b1a0";
    const template = `${rx.base}${at}?token=${token}&cid=\${externalId}&conv={{conversionId}}&payout={{payout}}`;
    await setPostback(t, who, cat.trafficSourceId, "clickid", { url: template, payoutShare: 50, enabled: false });
    const before = await recorded(who.tenantId);

    const res = await postbackTest(who, cat.trafficSourceId);
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    // Sent even though the postback is disabled: a test is how one checks it before enabling it.
    const [got] = rx.at(at);
    expect(got?.method).toBe("GET");
    expect(got?.query.get("token")).toBe(token);
    expect(got?.query.get("cid")).toMatch(/^test_/);
    expect(got?.query.get("conv")).toMatch(/^test_/);
    expect(got?.query.get("payout")).not.toBe("");
    expect(data.request.method).toBe("GET");
    expect(data.request.url).toContain(`${rx.base}${at}?token=[redacted]`);
    expect(data.request.url).toContain(`cid=${got?.query.get("cid")}`);
    expect(res.body).not.toContain(token);
    expect(data.response).toEqual({ status: 200, body: "OK received" });
    expect(data.error).toBeNull();
    expect(await recorded(who.tenantId)).toEqual(before);
    expect(await auditActions(who.tenantId, "traffic_source.postback_test")).toContainEqual({
      status: 200,
      delivered: true,
    });
  });

  it("answers a failing receiver's status and body as the error, and an unreachable one with no response", async () => {
    const { who, cat } = tenant;
    const at = path("fail");
    rx.on(at, { status: 503, body: "down for maintenance" });
    await setPostback(t, who, cat.trafficSourceId, null, { url: `${rx.base}${at}?c={{conversionId}}` });
    const res = await postbackTest(who, cat.trafficSourceId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      response: { status: 503, body: "down for maintenance" },
      error: "The receiver answered 503",
    });

    const hang = path("hang");
    rx.on(hang, "hang");
    await setPostback(t, who, cat.trafficSourceId, null, { url: `${rx.base}${hang}` });
    const slow = await postbackTest(who, cat.trafficSourceId);
    expect(slow.statusCode, slow.body).toBe(200);
    expect(slow.json().data).toMatchObject({ response: null, error: "The receiver did not answer in time" });
  });

  it("refuses a source without a postback (409 naming it), another tenant's source (404) and a caller without webhooks.update (403)", async () => {
    const { who, cat } = tenant;
    await patchSource(t, who, cat.trafficSourceId, { postback: null });
    const none = await postbackTest(who, cat.trafficSourceId);
    expect(none.statusCode, none.body).toBe(409);
    expect(none.json().message).toMatch(/postback/);

    await setPostback(t, other.who, other.cat.trafficSourceId, null, { url: `${rx.base}${path("other")}` });
    const foreign = await postbackTest(who, other.cat.trafficSourceId);
    expect(foreign.statusCode, foreign.body).toBe(404);
    expect((await postbackTest(who, 999_999)).statusCode).toBe(404);
    const bad = await post(who, "/api/v1/traffic-sources/abc/postback/test");
    expect(bad.statusCode, bad.body).toBe(400);
    expect(bad.body).toMatch(/id/);

    const reader = await signInPerson(t, other.who.tenantId, { name: "Reader", permissions: ["webhooks.read"] });
    const denied = await postbackTest(reader.bearer, other.cat.trafficSourceId);
    expect(denied.statusCode, denied.body).toBe(403);
  });
});

const adsTest = (who: Tenancy | string, sourceId: number) => post(who, `${adsPath(sourceId)}/test`);

describe("POST /traffic-sources/{id}/google-ads/test", () => {
  it("exchanges the token and validates a sample per action with validateOnly: ok, and Google keeps nothing", async () => {
    const { who, cat } = tenant;
    const client = google.newClient();
    await connectAds(t, who, cat.trafficSourceId, adsBody(client));
    const before = await recorded(who.tenantId);
    const calls = google.ingestCalls.length;
    const res = await adsTest(who, cat.trafficSourceId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ ok: true, error: null });
    const call = google.ingestCalls[calls];
    expect(call?.body.validateOnly).toBe(true);
    expect(call?.httpStatus).toBe(200);
    expect(call?.body.destinations?.map((d) => d.productDestinationId).sort()).toEqual(["111", "222"]);
    expect(call?.body.events?.every((e) => e.transactionId?.startsWith("test_"))).toBe(true);
    expect([...google.accepted.keys()].some((id) => id.startsWith("test_"))).toBe(false);
    expect(await recorded(who.tenantId)).toEqual(before);
    expect(res.body).not.toContain(client.clientSecret);
    expect(await auditActions(who.tenantId, "google_ads.test")).toContainEqual({ ok: true });
  });

  it("answers the reason when the credentials, the account or an action is refused", async () => {
    const { who, cat } = tenant;
    const revoked = google.newClient();
    await connectAds(t, who, cat.trafficSourceId, adsBody(revoked));
    google.revoke(revoked.refreshToken);
    const grant = (await adsTest(who, cat.trafficSourceId)).json().data;
    expect(grant.ok).toBe(false);
    expect(grant.error).toMatch(/token exchange failed: invalid_grant/);
    expect(grant.error).not.toContain(revoked.refreshToken);

    const client = google.newClient();
    google.denyAccount("9876543210");
    await connectAds(t, who, cat.trafficSourceId, adsBody(client, { accountId: "987-654-3210" }));
    const account = (await adsTest(who, cat.trafficSourceId)).json().data;
    expect(account).toMatchObject({ ok: false });
    expect(account.error).toMatch(/PERMISSION_DENIED/);

    google.unknownAction("333");
    await connectAds(t, who, cat.trafficSourceId, adsBody(client, { conversionActions: { Signup: "333" } }));
    const action = (await adsTest(who, cat.trafficSourceId)).json().data;
    expect(action.ok).toBe(false);
    expect(action.error).toMatch(/INVALID_ARGUMENT.*productDestinationId: Conversion action not found/);

    google.failToken("reset");
    const down = (await adsTest(who, cat.trafficSourceId)).json().data;
    expect(down.ok).toBe(false);
    expect(down.error).toMatch(/NETWORK_ERROR/);
  });

  it("is a 404 for another tenant's source and for a source without an integration", async () => {
    const foreign = await adsTest(other.who, tenant.cat.trafficSourceId);
    expect(foreign.statusCode, foreign.body).toBe(404);
    const bare = await adsTest(other.who, other.cat.trafficSourceId);
    expect(bare.statusCode, bare.body).toBe(404);
    expect(bare.json().message).toMatch(/Google Ads integration/);
  });
});

const NOTIFICATIONS = "/api/v1/notifications/webhooks";

describe("POST /notifications/webhooks/{id}/test", () => {
  it("sends a signed `test` message with the Standard Webhooks headers, not recorded as a delivery", async () => {
    const who = await seedTenancy(t);
    const at = path("notify");
    const created = await t.call({
      method: "POST",
      url: NOTIFICATIONS,
      headers: auth(who),
      payload: { url: `${rx.base}${at}`, events: ["issue.opened"] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { id, secret } = created.json().data as { id: string; secret: string };
    const before = await recorded(who.tenantId);

    const res = await post(who, `${NOTIFICATIONS}/${id}/test`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ delivered: true, status: 200, error: null });
    const [got] = rx.at(at);
    const body = JSON.parse(got?.body ?? "{}");
    expect(body).toMatchObject({ type: "test", data: { webhookId: id } });
    const messageId = String(got?.headers["webhook-id"]);
    const timestamp = String(got?.headers["webhook-timestamp"]);
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    const mac = createHmac("sha256", key).update(`${messageId}.${timestamp}.${got?.body}`).digest("base64");
    expect(got?.headers["webhook-signature"]).toBe(`v1,${mac}`);
    expect(got?.headers["service-webhook-signature"]).toBe(`v1,${mac}`);
    expect(await recorded(who.tenantId)).toEqual(before);
    const deliveries = await t.call({ method: "GET", url: `${NOTIFICATIONS}/${id}/deliveries`, headers: auth(who) });
    expect(deliveries.json().data).toEqual([]);
    expect(res.body).not.toContain(secret);

    // A failing receiver: the status and the reason.
    const down = path("notify-down");
    rx.on(down, { status: 500 });
    await t.call({
      method: "PATCH",
      url: `${NOTIFICATIONS}/${id}`,
      headers: auth(who),
      payload: { url: `${rx.base}${down}` },
    });
    const failed = await post(who, `${NOTIFICATIONS}/${id}/test`);
    expect(failed.json().data).toEqual({ delivered: false, status: 500, error: "The receiver answered 500" });

    // Another tenant's webhook is unknown.
    expect((await post(other.who, `${NOTIFICATIONS}/${id}/test`)).statusCode).toBe(404);
    expect((await post(who, `${NOTIFICATIONS}/whk_nope/test`)).statusCode).toBe(404);

    // A few tests per webhook per minute (SIMULATE_PER_WEBHOOK_PER_MINUTE, 5 here): then 429.
    const answers: number[] = [];
    for (let i = 0; i < 4; i++) answers.push((await post(who, `${NOTIFICATIONS}/${id}/test`)).statusCode);
    expect(answers).toEqual([200, 200, 200, 429]);
    expect(await auditActions(who.tenantId, "notification_webhook.test")).toHaveLength(5);
  });
});
