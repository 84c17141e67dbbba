import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";

// GET|POST /postback/{postbackKey} (docs/tracking-and-postbacks.md) and the rotation of the key in
// /api/v1/settings.

const FORM = "application/x-www-form-urlencoded";

let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;

beforeAll(async () => {
  // Buffered clicks are written only when something asks for them, never by the timer.
  t = await startTestApp({ app: { clicks: { intervalMs: 3_600_000 } } });
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
});
afterAll(async () => t.close());

function postback(key: string, query: Record<string, string>) {
  return t.call({ method: "GET", url: `/postback/${key}?${new URLSearchParams(query)}` });
}

/** The conversion as the API reads it back, in the owner's tenant. */
async function stored(id: string, as: Tenancy = who) {
  const res = await t.call({ method: "GET", url: `/api/v1/conversions/${id}`, headers: { authorization: as.apiKey } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

async function countConversions(tenantId: string): Promise<number> {
  const [row] = await t.ctx.db.query<{ n: string }>("select count(*) as n from conversions where tenant_id = $1", [
    tenantId,
  ]);
  return Number(row?.n);
}

describe("postback", () => {
  it("GET with query parameters records the conversion and answers its own JSON", async () => {
    const clickId = await clickThrough(t, cat, "?msclkid=MS-pb");
    expect(t.ctx.tracking.clicks.holds(clickId)).toBe(true);
    const res = await postback(who.postbackKey, {
      clickId,
      type: "FirstTimeDeposit",
      value: "49.90",
      currency: "usd",
      eventName: "ftd",
      externalId: "pb-get-1",
      occurredAt: new Date(t.clock.now().getTime() - 60_000).toISOString(),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    const body = JSON.parse(res.body);
    expect(Object.keys(body).sort()).toEqual([
      "attributed",
      "conversionId",
      "conversionStatus",
      "currency",
      "duplicate",
      "id",
      "message",
      "status",
      "statusChanged",
      "type",
      "value",
    ]);
    expect(body).toMatchObject({ duplicate: false, id: body.conversionId, type: "FirstTimeDeposit", value: 49.9 });
    expect(body).toMatchObject({ status: "ok", attributed: true });
    expect(body.message).toBe("Recorded");
    expect(body.conversionId).toMatch(/^cnv_/);
    expect(await stored(body.conversionId)).toMatchObject({
      type: "FirstTimeDeposit",
      eventName: "ftd",
      value: 49.9,
      currency: "USD",
      clickId,
      externalId: "pb-get-1",
      attributed: true,
      attributionSource: "microsoft",
      linkId: cat.linkId,
      accountId: cat.accountId,
    });
  });

  it("POST with a JSON body", async () => {
    const clickId = await clickThrough(t, cat, "?obclid=OB-pb");
    const res = await t.call({
      method: "POST",
      url: `/postback/${who.postbackKey}`,
      payload: { clickId, type: "Deposit", value: "12.5", currency: "EUR", externalId: "pb-json-1" },
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ status: "ok", attributed: true });
    expect(await stored(body.conversionId)).toMatchObject({
      type: "Deposit",
      value: 12.5,
      currency: "EUR",
      attributionSource: "outbrain",
    });
  });

  it("POST with a JSON number for value", async () => {
    const res = await t.call({
      method: "POST",
      url: `/postback/${who.postbackKey}`,
      payload: { type: "Deposit", value: 7.25, currency: "EUR" },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect((await stored(JSON.parse(res.body).conversionId)).value).toBe(7.25);
  });

  it.each([FORM, `${FORM}; charset=UTF-8`])("POST with a form body (%s)", async (contentType) => {
    const clickId = await clickThrough(t, cat, "?fbclid=FB-form");
    const form = new URLSearchParams({ clickId, type: "Qualifier", value: "0", externalId: `pb-form-${contentType}` });
    const res = await t.call({
      method: "POST",
      url: `/postback/${who.postbackKey}`,
      headers: { "content-type": contentType },
      payload: form.toString(),
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ status: "ok", attributed: true });
    expect(await stored(body.conversionId)).toMatchObject({
      type: "Qualifier",
      externalId: `pb-form-${contentType}`,
      attributionSource: "meta",
    });
  });

  it("an unknown click is recorded unattributed", async () => {
    const res = await postback(who.postbackKey, { type: "Signup", clickId: "not-a-click" });
    expect(res.statusCode, res.body).toBe(201);
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ status: "ok", attributed: false });
    expect(body.message).toMatch(/unattributed/i);
    expect(await stored(body.conversionId)).toMatchObject({ attributed: false, attributionSource: "direct" });
  });

  it("a repeated externalId answers 200 duplicate with the first conversion and stores nothing", async () => {
    const me = await seedTenancy(t);
    const first = await postback(me.postbackKey, { type: "Deposit", value: "10", currency: "EUR", externalId: "dup" });
    expect(first.statusCode, first.body).toBe(201);
    const firstId = JSON.parse(first.body).conversionId;
    const form = new URLSearchParams({ type: "Deposit", value: "99", currency: "EUR", externalId: "dup" });
    const again = await t.call({
      method: "POST",
      url: `/postback/${me.postbackKey}`,
      headers: { "content-type": FORM },
      payload: form.toString(),
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(JSON.parse(again.body)).toMatchObject({ status: "duplicate", conversionId: firstId, attributed: false });
    expect(JSON.parse(again.body).message).toMatch(/duplicate/i);
    expect(await countConversions(me.tenantId)).toBe(1);
    expect((await stored(firstId, me)).value).toBe(10);
  });

  it("a conversion lands in the tenant that owns the key", async () => {
    const a = await seedTenancy(t);
    const b = await seedTenancy(t);
    const res = await postback(b.postbackKey, { type: "Signup", externalId: "whose" });
    expect(res.statusCode).toBe(201);
    expect(await countConversions(a.tenantId)).toBe(0);
    expect(await countConversions(b.tenantId)).toBe(1);
    // Another tenant's click does not attribute it.
    const theirClick = await clickThrough(t, cat, "?gclid=NOT-B");
    const cross = await postback(b.postbackKey, { type: "Signup", clickId: theirClick });
    expect(JSON.parse(cross.body).attributed).toBe(false);
  });

  it("an unknown key is 404 in the postback's own JSON", async () => {
    const before = await t.ctx.db.query<{ n: string }>("select count(*) as n from conversions");
    for (const res of [
      await postback("definitely-not-a-key", { type: "Signup" }),
      await t.call({ method: "POST", url: "/postback/definitely-not-a-key", payload: { type: "Signup" } }),
      // A tenant's key with a character changed is as unknown as any other.
      await postback(`${who.postbackKey.slice(0, -1)}${who.postbackKey.endsWith("a") ? "b" : "a"}`, { type: "Signup" }),
    ]) {
      expect(res.statusCode, res.body).toBe(404);
      expect(JSON.parse(res.body)).toEqual({ status: "error", message: expect.stringMatching(/postback key/i) });
    }
    const after = await t.ctx.db.query<{ n: string }>("select count(*) as n from conversions");
    expect(after[0]?.n).toBe(before[0]?.n);
  });

  const future = () => new Date(t.clock.now().getTime() + 24 * 3600_000).toISOString();
  it.each([
    ["missing type", () => ({ value: "0" }), /^type /],
    ["unknown type", () => ({ type: "Purchase" }), /^type .*'Purchase'/],
    ["value not a number", () => ({ type: "Deposit", value: "ten", currency: "EUR" }), /^value /],
    ["value in hexadecimal", () => ({ type: "Deposit", value: "0x10", currency: "EUR" }), /^value /],
    ["value with 5 decimals", () => ({ type: "Deposit", value: "1.00001", currency: "EUR" }), /^value .*4 decimal/],
    ["negative deposit", () => ({ type: "Deposit", value: "-1", currency: "EUR" }), /^value .*negative/],
    ["currency 'EURO'", () => ({ type: "Deposit", value: "10", currency: "EURO" }), /^currency /],
    ["currency 'XYZ'", () => ({ type: "Deposit", value: "10", currency: "XYZ" }), /^currency .*'XYZ'/],
    ["occurredAt not a date", () => ({ type: "Signup", occurredAt: "soon" }), /^occurredAt /],
    ["occurredAt in the future", () => ({ type: "Signup", occurredAt: future() }), /^occurredAt .*future/],
  ])("%s is 400 with the reason, for GET and POST", async (_label, fields, reason) => {
    const me = await seedTenancy(t);
    const answers = [
      await postback(me.postbackKey, fields()),
      await t.call({ method: "POST", url: `/postback/${me.postbackKey}`, payload: fields() }),
      await t.call({
        method: "POST",
        url: `/postback/${me.postbackKey}`,
        headers: { "content-type": FORM },
        payload: new URLSearchParams(fields()).toString(),
      }),
    ];
    for (const res of answers) {
      expect(res.statusCode, res.body).toBe(400);
      const body = JSON.parse(res.body);
      expect(body.status).toBe("error");
      expect(body.message).toMatch(reason);
      expect(body).not.toHaveProperty("conversionId");
    }
    expect(await countConversions(me.tenantId)).toBe(0);
  });

  it("a negative commission is accepted", async () => {
    const res = await postback(who.postbackKey, { type: "CpaCommission", value: "-20", currency: "EUR" });
    expect(res.statusCode, res.body).toBe(201);
    expect((await stored(JSON.parse(res.body).conversionId)).value).toBe(-20);
  });

  // A field the route schema refuses (a repeated parameter, a JSON object) must still get the
  // postback's own { status: "error", message } JSON (src/features/tracking/public-routes.ts), not
  // the shared error handler's answer.
  it("a repeated parameter counts with its first value, in the postback's own JSON", async () => {
    const before = await countConversions(who.tenantId);
    const res = await t.call({ method: "GET", url: `/postback/${who.postbackKey}?type=Signup&type=Deposit` });
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    // A network's template that appends a parameter already in the URL must not lose the
    // conversion: the first value counts, and exactly one conversion is recorded.
    expect(res.statusCode, res.body).toBe(201);
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ status: "ok", type: "Signup", duplicate: false });
    expect(await countConversions(who.tenantId)).toBe(before + 1);
  });
});

describe("postback key rotation and settings", () => {
  it("POST /api/v1/settings/postback-key gives a new key; the old one stops working at once", async () => {
    const me = await seedTenancy(t);
    const oldKey = me.postbackKey;
    expect((await postback(oldKey, { type: "Signup" })).statusCode).toBe(201);

    const rotated = await t.call({
      method: "POST",
      url: "/api/v1/settings/postback-key",
      headers: { authorization: me.bearer },
    });
    expect(rotated.statusCode, rotated.body).toBe(201);
    const { postbackKey, postbackUrl } = rotated.json().data;
    expect(typeof postbackKey).toBe("string");
    expect(postbackKey.length).toBeGreaterThanOrEqual(20);
    expect(postbackKey).not.toBe(oldKey);
    expect(postbackUrl).toContain(`/postback/${postbackKey}?`);

    const old = await postback(oldKey, { type: "Signup" });
    expect(old.statusCode).toBe(404);
    const fresh = await postback(postbackKey, { type: "Signup", externalId: "after-rotation" });
    expect(fresh.statusCode, fresh.body).toBe(201);
    expect(await countConversions(me.tenantId)).toBe(2);

    // A second rotation retires the first new key too.
    const again = await t.call({
      method: "POST",
      url: "/api/v1/settings/postback-key",
      headers: { authorization: me.apiKey },
    });
    expect(again.statusCode).toBe(201);
    expect((await postback(postbackKey, { type: "Signup" })).statusCode).toBe(404);
    expect((await postback(again.json().data.postbackKey, { type: "Signup" })).statusCode).toBe(201);
  });

  it("rotating needs account.admin; the key of other tenants is untouched", async () => {
    const admin = await seedTenancy(t);
    const clerk = await seedTenancy(t, { permissions: ["conversions.update", "conversions.read"] });
    const refused = await t.call({
      method: "POST",
      url: "/api/v1/settings/postback-key",
      headers: { authorization: clerk.bearer },
    });
    expect(refused.statusCode).toBe(403);
    expect((await postback(clerk.postbackKey, { type: "Signup" })).statusCode).toBe(201);
    const noCredential = await t.call({ method: "POST", url: "/api/v1/settings/postback-key" });
    expect(noCredential.statusCode).toBe(401);

    const rotated = await t.call({
      method: "POST",
      url: "/api/v1/settings/postback-key",
      headers: { authorization: admin.bearer },
    });
    expect(rotated.statusCode).toBe(201);
    expect((await postback(clerk.postbackKey, { type: "Signup" })).statusCode).toBe(201);
  });

  it("GET /api/v1/settings shows the postback URL template and never the key", async () => {
    const me = await seedTenancy(t);
    const res = await t.call({ method: "GET", url: "/api/v1/settings", headers: { authorization: me.bearer } });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data.id).toBe(me.tenantId);
    expect(data.postbackUrlTemplate).toMatch(/\/postback\/\{postbackKey\}\?/);
    expect(data.postbackUrlTemplate).toContain("clickId={clickId}");
    expect(res.body).not.toContain(me.postbackKey);
    expect(JSON.stringify(data).toLowerCase()).not.toMatch(/postbackkey"|postback_key|hash/);

    const rotated = await t.call({
      method: "POST",
      url: "/api/v1/settings/postback-key",
      headers: { authorization: me.bearer },
    });
    const after = await t.call({ method: "GET", url: "/api/v1/settings", headers: { authorization: me.bearer } });
    expect(after.body).not.toContain(rotated.json().data.postbackKey);

    const clerk = await seedTenancy(t, { permissions: ["conversions.read"] });
    const refused = await t.call({ method: "GET", url: "/api/v1/settings", headers: { authorization: clerk.bearer } });
    expect(refused.statusCode).toBe(403);
  });
});
