import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";

// POST/GET /api/v1/conversions (docs/tracking-and-postbacks.md, docs/conversions.md): attribution,
// idempotency, batches, validation, listing and permissions.

const RECORD_FIELDS = [
  "id",
  "type",
  "eventName",
  "value",
  "currency",
  "clickId",
  "externalId",
  "attributed",
  "attributionSource",
  "accountId",
  "brandId",
  "programId",
  "linkId",
  "trafficSourceId",
  "occurredAt",
  "recordedAt",
];

let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let other: Tenancy;
let otherCat: CatalogFixture;

beforeAll(async () => {
  // The timer never writes buffered clicks during a test: a click is in the database only
  // when something (the conversion service) flushes it.
  t = await startTestApp({ app: { clicks: { intervalMs: 3_600_000 } } });
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  other = await seedTenancy(t);
  otherCat = await seedCatalog(t, other);
});
afterAll(async () => t.close());

function post(payload: unknown, as: Tenancy = who) {
  return t.call({
    method: "POST",
    url: "/api/v1/conversions",
    headers: { authorization: as.apiKey },
    payload: payload as Record<string, unknown>,
  });
}

function get(url: string, as: Tenancy = who) {
  return t.call({ method: "GET", url, headers: { authorization: as.apiKey } });
}

async function countConversions(tenantId: string): Promise<number> {
  const [row] = await t.ctx.db.query<{ n: string }>("select count(*) as n from conversions where tenant_id = $1", [
    tenantId,
  ]);
  return Number(row?.n);
}

describe("POST /api/v1/conversions: one conversion", () => {
  it("answers 201 with the full record, attributed to a click made a moment ago (no flush by the test)", async () => {
    const clickId = await clickThrough(t, cat, "?gclid=G-attr-1");
    // The click is still only in this node's buffer: the service must write it itself.
    expect(t.ctx.tracking.clicks.holds(clickId)).toBe(true);
    expect(await t.ctx.db.query("select id from clicks where id = $1", [clickId])).toHaveLength(0);

    const res = await post({ type: "Deposit", clickId, value: 25.5, currency: "EUR", externalId: "dep-attr-1" });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body.code).toBe("ok");
    const data = body.data;
    for (const field of [...RECORD_FIELDS, "duplicate"]) expect(data, field).toHaveProperty(field);
    expect(data).toMatchObject({
      type: "Deposit",
      eventName: "Deposit",
      value: 25.5,
      currency: "EUR",
      clickId,
      externalId: "dep-attr-1",
      attributed: true,
      attributionSource: "google",
      accountId: cat.accountId,
      brandId: cat.brandId,
      programId: cat.programId,
      linkId: cat.linkId,
      trafficSourceId: cat.trafficSourceId,
      duplicate: false,
    });
    expect(data.id).toMatch(/^cnv_/);
    expect(body.message).not.toMatch(/unattributed/i);
    expect(t.ctx.tracking.clicks.holds(clickId)).toBe(false);

    const stored = await get(`/api/v1/conversions/${data.id}`);
    expect(stored.statusCode).toBe(200);
    const { pageViews, ...record } = stored.json().data;
    expect(pageViews).toEqual([]);
    const { duplicate, statusChanged, ...posted } = data;
    expect([duplicate, statusChanged]).toEqual([false, false]);
    expect(record).toEqual(posted);
  });

  it.each([
    ["gclid=G1", "google"],
    ["fbclid=F1", "meta"],
    ["msclkid=M1", "microsoft"],
    ["obclid=O1", "outbrain"],
    ["utm_source=newsletter", "direct"],
    ["", "direct"],
  ])("a click with '%s' gives attributionSource %s", async (query, source) => {
    const clickId = await clickThrough(t, cat, query ? `?${query}` : "");
    const res = await post({ type: "Signup", clickId });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({ attributed: true, attributionSource: source, linkId: cat.linkId });
  });

  it("a click carrying several platform ids is attributed to the first in order gclid, fbclid, msclkid, obclid", async () => {
    const clickId = await clickThrough(t, cat, "?obclid=O2&msclkid=M2&fbclid=F2");
    const res = await post({ type: "Signup", clickId });
    expect(res.json().data.attributionSource).toBe("meta");
  });

  it.each([
    ["an unknown clickId", { clickId: "no-such-click" }],
    ["a well-formed but unknown click id", { clickId: "clk_0000000000000000000000000a" }],
    ["no clickId", {}],
    ["a null clickId", { clickId: null }],
  ])("%s is recorded unattributed and direct", async (_label, extra) => {
    const res = await post({ type: "Signup", ...extra });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().message).toMatch(/unattributed/i);
    expect(res.json().data).toMatchObject({
      attributed: false,
      attributionSource: "direct",
      accountId: null,
      brandId: null,
      programId: null,
      linkId: null,
      trafficSourceId: null,
      duplicate: false,
    });
  });

  it("a click of another tenant does not attribute the conversion", async () => {
    const theirs = await clickThrough(t, otherCat, "?gclid=THEIRS");
    const res = await post({ type: "Signup", clickId: theirs });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({
      clickId: theirs,
      attributed: false,
      attributionSource: "direct",
      linkId: null,
    });
  });

  it("eventName defaults to the type and keeps an explicit one", async () => {
    const plain = await post({ type: "FirstTimeDeposit", value: 10, currency: "USD" });
    expect(plain.json().data.eventName).toBe("FirstTimeDeposit");
    const named = await post({ type: "Qualifier", eventName: "kyc-passed" });
    expect(named.json().data).toMatchObject({ type: "Qualifier", eventName: "kyc-passed" });
  });

  it("occurredAt defaults to now; an explicit one is kept; recordedAt is now", async () => {
    t.clock.set("2026-06-15T10:20:30.000Z");
    try {
      const byDefault = await post({ type: "Signup" });
      expect(byDefault.json().data).toMatchObject({
        occurredAt: "2026-06-15T10:20:30.000Z",
        recordedAt: "2026-06-15T10:20:30.000Z",
      });
      const explicit = await post({ type: "Signup", occurredAt: "2026-06-01T08:00:00+02:00" });
      expect(explicit.statusCode, explicit.body).toBe(201);
      expect(explicit.json().data).toMatchObject({
        occurredAt: "2026-06-01T06:00:00.000Z",
        recordedAt: "2026-06-15T10:20:30.000Z",
      });
      // A program's clock a minute ahead of ours is tolerated.
      const ahead = await post({ type: "Signup", occurredAt: "2026-06-15T10:21:30Z" });
      expect(ahead.statusCode, ahead.body).toBe(201);
    } finally {
      t.clock.set(new Date());
    }
  });

  it("keeps money exact: string values, 4 decimals, zero in the default currency, negative commissions", async () => {
    const asString = await post({ type: "Deposit", value: "19.99", currency: "GBP" });
    expect(asString.json().data).toMatchObject({ value: 19.99, currency: "GBP" });
    const fourPlaces = await post({ type: "Deposit", value: 1.2345, currency: "GBP" });
    expect(fourPlaces.json().data.value).toBe(1.2345);
    const zero = await post({ type: "Signup", value: 0 });
    expect(zero.statusCode, zero.body).toBe(201);
    // A value without a currency is in the tenant's default currency (USD unless set).
    expect(zero.json().data).toMatchObject({ value: 0, currency: "USD" });
    const reversal = await post({ type: "RevShareCommission", value: -12.5, currency: "EUR" });
    expect(reversal.statusCode, reversal.body).toBe(201);
    expect(reversal.json().data.value).toBe(-12.5);
    const lower = await post({ type: "Deposit", value: 5, currency: "usd" });
    expect(lower.statusCode, lower.body).toBe(201);
    expect(lower.json().data.currency).toBe("USD");
  });
});

describe("POST /api/v1/conversions: idempotency on externalId", () => {
  it("a repeat answers 200 with the first record, duplicate: true, and stores nothing", async () => {
    const me = await seedTenancy(t);
    const first = await post({ type: "Deposit", value: 100, currency: "EUR", externalId: "tx-1" }, me);
    expect(first.statusCode, first.body).toBe(201);
    expect(await countConversions(me.tenantId)).toBe(1);

    const again = await post({ type: "Deposit", value: 999, currency: "USD", externalId: "tx-1" }, me);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().message).toMatch(/duplicate/i);
    const { duplicate, ...record } = again.json().data;
    expect(duplicate).toBe(true);
    const { duplicate: _, ...original } = first.json().data;
    expect(record).toEqual(original);
    expect(await countConversions(me.tenantId)).toBe(1);

    const rollups = await t.ctx.db.query<{ n: string; amount: string }>(
      "select sum(deposit_count) as n, sum(deposit_amount) as amount from daily_rollups where tenant_id = $1",
      [me.tenantId],
    );
    expect(Number(rollups[0]?.n)).toBe(1);
    expect(Number(rollups[0]?.amount)).toBe(100);
  });

  it("concurrent repeats of one externalId record it once", async () => {
    const me = await seedTenancy(t);
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        post({ type: "Deposit", value: i + 1, currency: "EUR", externalId: "race" }, me),
      ),
    );
    const statuses = answers.map((a) => a.statusCode).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 201]);
    const ids = new Set(answers.map((a) => a.json().data.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.json().data.duplicate)).toHaveLength(4);
    expect(await countConversions(me.tenantId)).toBe(1);
  });

  it("the same externalId in another tenant is a separate conversion", async () => {
    const a = await seedTenancy(t);
    const b = await seedTenancy(t);
    const inA = await post({ type: "Signup", externalId: "shared-ext" }, a);
    const inB = await post({ type: "Signup", externalId: "shared-ext" }, b);
    expect(inA.statusCode).toBe(201);
    expect(inB.statusCode, inB.body).toBe(201);
    expect(inB.json().data.duplicate).toBe(false);
    expect(inB.json().data.id).not.toBe(inA.json().data.id);
    expect(await countConversions(a.tenantId)).toBe(1);
    expect(await countConversions(b.tenantId)).toBe(1);
  });

  it("conversions without externalId are never duplicates of each other", async () => {
    const me = await seedTenancy(t);
    expect((await post({ type: "Signup" }, me)).statusCode).toBe(201);
    expect((await post({ type: "Signup" }, me)).statusCode).toBe(201);
    expect(await countConversions(me.tenantId)).toBe(2);
  });
});

describe("POST /api/v1/conversions: batches", () => {
  it("records a batch: 201 with items, created and duplicates", async () => {
    const me = await seedTenancy(t);
    const mine = await seedCatalog(t, me);
    const clickId = await clickThrough(t, mine, "?fbclid=FB-batch");
    const res = await post(
      {
        items: [
          { type: "Signup", clickId, externalId: "b-1" },
          { type: "Deposit", clickId, value: 50, currency: "eur", externalId: "b-2" },
          { type: "Qualifier" },
        ],
      },
      me,
    );
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data).toMatchObject({ created: 3, duplicates: 0 });
    expect(data.items).toHaveLength(3);
    expect(data.items.map((i: { type: string }) => i.type)).toEqual(["Signup", "Deposit", "Qualifier"]);
    expect(data.items[0]).toMatchObject({ attributed: true, attributionSource: "meta", duplicate: false });
    expect(data.items[1]).toMatchObject({ value: 50, currency: "EUR", attributed: true, linkId: mine.linkId });
    expect(data.items[2]).toMatchObject({ attributed: false, attributionSource: "direct" });
    for (const item of data.items) for (const field of RECORD_FIELDS) expect(item).toHaveProperty(field);
    expect(await countConversions(me.tenantId)).toBe(3);
  });

  it("a duplicate inside the same batch, and a batch of only duplicates answering 200", async () => {
    const me = await seedTenancy(t);
    const res = await post(
      {
        items: [
          { type: "Deposit", value: 10, currency: "EUR", externalId: "same" },
          { type: "Deposit", value: 20, currency: "EUR", externalId: "same" },
          { type: "Signup", externalId: "other" },
        ],
      },
      me,
    );
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data).toMatchObject({ created: 2, duplicates: 1 });
    expect(data.items[1]).toMatchObject({ id: data.items[0].id, value: 10, duplicate: true });
    expect(data.items[0].duplicate).toBe(false);
    expect(await countConversions(me.tenantId)).toBe(2);

    const repeat = await post({ items: [{ type: "Signup", externalId: "other" }] }, me);
    expect(repeat.statusCode, repeat.body).toBe(200);
    expect(repeat.json().data).toMatchObject({ created: 0, duplicates: 1 });
    expect(repeat.json().data.items[0]).toMatchObject({ id: data.items[2].id, duplicate: true });
    expect(await countConversions(me.tenantId)).toBe(2);
  });

  it("takes 1,000 items and refuses 1,001", async () => {
    const me = await seedTenancy(t);
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ type: "Signup", externalId: `n-${i}` }));
    const tooMany = await post({ items: items(1001) }, me);
    expect(tooMany.statusCode, tooMany.body).toBe(400);
    expect(tooMany.json().code).toBe("validation_error");
    expect(tooMany.json().message).toMatch(/^items\b/);
    expect(await countConversions(me.tenantId)).toBe(0);

    const full = await post({ items: items(1000) }, me);
    expect(full.statusCode, full.body.slice(0, 300)).toBe(201);
    expect(full.json().data).toMatchObject({ created: 1000, duplicates: 0 });
    expect(await countConversions(me.tenantId)).toBe(1000);
  });

  it("an empty batch is refused", async () => {
    const res = await post({ items: [] });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^items\b/);
  });

  it.each([
    [
      "a rule of the service",
      [{ type: "Signup" }, { type: "Deposit", value: 10, clickId: "{clickId}" }, { type: "Signup" }],
      "items[1].clickId",
      /unfilled/,
    ],
    [
      "a negative deposit",
      [{ type: "Signup" }, { type: "Signup" }, { type: "Deposit", value: -1, currency: "EUR" }],
      "items[2].value",
      /negative/,
    ],
    ["an unknown type", [{ type: "Signup" }, { type: "Purchase" }], "items[1].type", /Purchase/],
    ["a missing type", [{ type: "Signup" }, { value: 0 }], "items[1].type", /required/],
    ["an unknown field", [{ type: "Signup", colour: "red" }], "items[0].colour", /./],
  ])(
    "an invalid item (%s) is a 400 naming it, and nothing of the batch is stored",
    async (_label, items, path, reason) => {
      const me = await seedTenancy(t);
      const res = await post({ items }, me);
      expect(res.statusCode, res.body).toBe(400);
      const body = res.json();
      expect(body.code).toBe("validation_error");
      expect(body.message.startsWith(`${path} `), body.message).toBe(true);
      expect(body.data.errors[0].path).toBe(path);
      expect(body.data.errors[0].message).toMatch(reason);
      expect(await countConversions(me.tenantId)).toBe(0);
    },
  );

  it.each([
    ["type", { type: "Signup" }],
    ["externalId", { externalId: "x" }],
    ["clickId", { clickId: null }],
  ])("a field (%s) beside items is refused", async (field, extra) => {
    const me = await seedTenancy(t);
    const res = await post({ items: [{ type: "Signup" }], ...extra }, me);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().data.errors[0].path).toBe(field);
    expect(await countConversions(me.tenantId)).toBe(0);
  });
});

describe("POST /api/v1/conversions: validation", () => {
  const future = () => new Date(t.clock.now().getTime() + 60 * 60_000).toISOString();
  const cases: Array<[string, () => Record<string, unknown>, string, RegExp]> = [
    ["missing type", () => ({ value: 1, currency: "EUR" }), "type", /required/],
    ["empty body", () => ({}), "type", /required/],
    ["unknown type", () => ({ type: "Purchase" }), "type", /'Purchase'/],
    ["type Click (made by the redirect, never recorded)", () => ({ type: "click" }), "type", /'Click'.*Signup/],
    ["value not a number", () => ({ type: "Deposit", value: "abc", currency: "EUR" }), "value", /number/],
    ["value an object", () => ({ type: "Deposit", value: { amount: 1 }, currency: "EUR" }), "value", /./],
    ["value with 5 decimals", () => ({ type: "Deposit", value: 1.23456, currency: "EUR" }), "value", /4 decimal/],
    ["value string with 5 decimals", () => ({ type: "Deposit", value: "1.23456", currency: "EUR" }), "value", /4/],
    ["negative Deposit", () => ({ type: "Deposit", value: -5, currency: "EUR" }), "value", /negative/],
    [
      "negative FirstTimeDeposit",
      () => ({ type: "FirstTimeDeposit", value: "-0.01", currency: "EUR" }),
      "value",
      /negative/,
    ],
    ["currency 'EURO'", () => ({ type: "Deposit", value: 10, currency: "EURO" }), "currency", /./],
    ["currency 'XYZ'", () => ({ type: "Deposit", value: 10, currency: "XYZ" }), "currency", /XYZ/],
    ["occurredAt not a date", () => ({ type: "Signup", occurredAt: "yesterday" }), "occurredAt", /date/],
    ["occurredAt at hour 25", () => ({ type: "Signup", occurredAt: "2026-03-01T25:00:00Z" }), "occurredAt", /date/],
    ["occurredAt far in the future", () => ({ type: "Signup", occurredAt: future() }), "occurredAt", /future/],
    ["unknown body field", () => ({ type: "Signup", colour: "red" }), "colour", /./],
    ["externalId too long", () => ({ type: "Signup", externalId: "x".repeat(201) }), "externalId", /./],
  ];

  it.each(cases)("%s is a 400 naming the field", async (_label, payload, path, reason) => {
    const res = await post(payload());
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json();
    expect(body.code).toBe("validation_error");
    expect(body.message.startsWith(`${path} `), body.message).toBe(true);
    expect(body.data.errors[0].path).toBe(path);
    expect(body.data.errors[0].message).toMatch(reason);
  });

  // The `value` union (src/features/tracking/schemas.ts) under the app's ajv coerceTypes must not
  // coerce strings and booleans to floats before readValue sees them: the API refuses what the
  // postback refuses.
  it.each([
    ["true", true],
    ["'0x10'", "0x10"],
    ["'1e3'", "1e3"],
    ["'0.30000000000000004' (17 decimals)", "0.30000000000000004"],
  ])("value %s is refused like the postback refuses it", async (_label, value) => {
    const res = await post({ type: "Deposit", value, currency: "EUR" });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().data.errors[0].path).toBe("value");
  });

  it("a decimal string keeps every digit (money is never a float)", async () => {
    const res = await post({ type: "Deposit", value: "123456789012345.1234", currency: "EUR" });
    expect(res.statusCode, res.body).toBe(201);
    const [row] = await t.ctx.db.query<{ value: string }>(
      "select value::text as value from conversions where id = $1",
      [res.json().data.id],
    );
    expect(row?.value).toBe("123456789012345.1234");
  });

  // JavaScript's Date rolls the 30th of February over to the 2nd of March; readTime
  // (src/features/tracking/conversion-input.ts) refuses such a day instead.
  it("occurredAt on a day that does not exist is refused", async () => {
    const res = await post({ type: "Signup", occurredAt: "2026-02-30T10:00:00Z" });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().data.errors[0].path).toBe("occurredAt");
  });

  it("stores nothing for any refused conversion", async () => {
    const me = await seedTenancy(t);
    for (const [, payload] of cases) {
      const res = await post(payload(), me);
      expect(res.statusCode).toBe(400);
    }
    expect(await countConversions(me.tenantId)).toBe(0);
  });
});

describe("GET /api/v1/conversions", () => {
  let lister: Tenancy;
  let listCat: CatalogFixture;
  let clickId: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    lister = await seedTenancy(t);
    listCat = await seedCatalog(t, lister);
    clickId = await clickThrough(t, listCat, "?gclid=LIST");
    // Recorded on 2026-03-10: a filter on recordedAt instead of occurredAt would find nothing.
    t.clock.set("2026-03-10T12:00:00.000Z");
    const at: Array<[string, string, Record<string, unknown>]> = [
      ["feb28Late", "2026-02-28T23:59:59.999Z", { type: "Signup" }],
      ["mar1Start", "2026-03-01T00:00:00.000Z", { type: "Signup", clickId }],
      ["mar1Noon", "2026-03-01T12:00:00.000Z", { type: "Deposit", value: 10, currency: "EUR", clickId }],
      ["mar1End", "2026-03-01T23:59:59.999Z", { type: "Deposit", value: 20, currency: "EUR" }],
      ["mar2Start", "2026-03-02T00:00:00.000Z", { type: "Qualifier", clickId }],
    ];
    try {
      for (const [name, occurredAt, fields] of at) {
        const res = await post({ ...fields, occurredAt }, lister);
        expect(res.statusCode, res.body).toBe(201);
        ids[name] = res.json().data.id;
      }
      // Another tenant with the same click id and the same days must never show up. (Posted while
      // the clock is on 2026-03-10: occurredAt may be at most 120 days in the past.)
      const res = await post({ type: "Signup", clickId, occurredAt: "2026-03-01T06:00:00Z" }, other);
      expect(res.statusCode).toBe(201);
      ids.otherTenant = res.json().data.id;
    } finally {
      t.clock.set(new Date());
    }
  });

  const list = async (query: string) => {
    const res = await get(`/api/v1/conversions${query}`, lister);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const idsOf = (body: { data: Array<{ id: string }> }) => body.data.map((c) => c.id);

  it("lists the tenant's conversions newest first by occurredAt, with paging", async () => {
    const all = await list("");
    expect(all.pagination).toEqual({ offset: 0, limit: 50, total: 5 });
    expect(idsOf(all)).toEqual([ids.mar2Start, ids.mar1End, ids.mar1Noon, ids.mar1Start, ids.feb28Late]);
    for (const field of RECORD_FIELDS) expect(all.data[0]).toHaveProperty(field);
    expect(all.data[0]).not.toHaveProperty("pageViews");

    const page1 = await list("?limit=2");
    expect(idsOf(page1)).toEqual([ids.mar2Start, ids.mar1End]);
    expect(page1.pagination).toEqual({ offset: 0, limit: 2, total: 5 });
    const page3 = await list("?limit=2&offset=4");
    expect(idsOf(page3)).toEqual([ids.feb28Late]);
    expect(page3.pagination).toEqual({ offset: 4, limit: 2, total: 5 });
    const beyond = await list("?offset=10");
    expect(beyond.data).toEqual([]);
    expect(beyond.pagination?.total).toBe(5);
  });

  it("never lists another tenant's conversions", async () => {
    const all = await list(`?clickId=${clickId}`);
    expect(idsOf(all)).not.toContain(ids.otherTenant);
    const theirs = await get("/api/v1/conversions", other);
    expect(idsOf(theirs.json())).not.toContain(ids.mar1Start);
    expect(idsOf(theirs.json())).toContain(ids.otherTenant);
  });

  it("filters by type and clickId", async () => {
    expect(idsOf(await list("?type=Deposit"))).toEqual([ids.mar1End, ids.mar1Noon]);
    expect((await list("?type=Deposit")).pagination?.total).toBe(2);
    expect(idsOf(await list(`?clickId=${clickId}`))).toEqual([ids.mar2Start, ids.mar1Noon, ids.mar1Start]);
    expect(idsOf(await list(`?clickId=${clickId}&type=Signup`))).toEqual([ids.mar1Start]);
    expect((await list("?clickId=clk_nothing")).data).toEqual([]);
    const bad = await get("/api/v1/conversions?type=Purchase", lister);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/^type\b/);
  });

  it("a date-only range is whole UTC days, inclusive, on occurredAt", async () => {
    expect(idsOf(await list("?dateFrom=2026-03-01&dateTo=2026-03-01"))).toEqual([
      ids.mar1End,
      ids.mar1Noon,
      ids.mar1Start,
    ]);
    expect(idsOf(await list("?dateFrom=2026-03-02"))).toEqual([ids.mar2Start]);
    expect(idsOf(await list("?dateTo=2026-02-28"))).toEqual([ids.feb28Late]);
    expect(idsOf(await list("?dateFrom=2026-03-01T12:00:00Z&dateTo=2026-03-01T23:59:59.999Z"))).toEqual([
      ids.mar1End,
      ids.mar1Noon,
    ]);
    // The day they were recorded holds none of them.
    expect((await list("?dateFrom=2026-03-10&dateTo=2026-03-10")).data).toEqual([]);
  });

  it("refuses bad date parameters naming them", async () => {
    for (const [query, name] of [
      ["?dateFrom=March", "dateFrom"],
      ["?dateTo=2026-02-30", "dateTo"],
      ["?dateFrom=2026-03-02&dateTo=2026-03-01", "dateTo"],
    ]) {
      const res = await get(`/api/v1/conversions${query}`, lister);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().data.errors[0].path).toBe(name);
    }
  });

  it("GET /conversions/{id} answers the record, and 404 for another tenant's or an unknown id", async () => {
    const one = await get(`/api/v1/conversions/${ids.mar1Noon}`, lister);
    expect(one.statusCode).toBe(200);
    expect(one.json().data).toMatchObject({
      id: ids.mar1Noon,
      type: "Deposit",
      value: 10,
      occurredAt: "2026-03-01T12:00:00.000Z",
      recordedAt: "2026-03-10T12:00:00.000Z",
      attributed: true,
      attributionSource: "google",
      pageViews: [],
    });
    const theirs = await get(`/api/v1/conversions/${ids.otherTenant}`, lister);
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().code).toBe("not_found");
    const unknown = await get("/api/v1/conversions/cnv_doesnotexist", lister);
    expect(unknown.statusCode).toBe(404);
  });
});

describe("permissions", () => {
  it("POST needs conversions.update, GET needs conversions.read", async () => {
    const reader = await seedTenancy(t, { permissions: ["conversions.read"] });
    const writer = await seedTenancy(t, { permissions: ["conversions.update"] });
    const asBearer = (as: Tenancy, method: "GET" | "POST", url: string, payload?: Record<string, unknown>) =>
      t.call({ method, url, headers: { authorization: as.bearer }, ...(payload ? { payload } : {}) });

    const refused = await asBearer(reader, "POST", "/api/v1/conversions", { type: "Signup" });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json().code).toBe("forbidden");
    expect(await countConversions(reader.tenantId)).toBe(0);

    const written = await asBearer(writer, "POST", "/api/v1/conversions", { type: "Signup" });
    expect(written.statusCode, written.body).toBe(201);
    const id = written.json().data.id;
    expect((await asBearer(writer, "GET", "/api/v1/conversions")).statusCode).toBe(403);
    expect((await asBearer(writer, "GET", `/api/v1/conversions/${id}`)).statusCode).toBe(403);

    const read = await asBearer(reader, "GET", "/api/v1/conversions");
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toEqual([]);
  });

  it("no credential is 401, before the body is looked at", async () => {
    const cases: Array<[string, string, Record<string, unknown> | undefined]> = [
      ["POST", "/api/v1/conversions", { type: "Signup" }],
      ["POST", "/api/v1/conversions", { type: "Nonsense", colour: "red" }],
      ["GET", "/api/v1/conversions", undefined],
      ["GET", "/api/v1/conversions/cnv_x", undefined],
    ];
    for (const [method, url, payload] of cases) {
      const res = await t.call({ method: method as "GET" | "POST", url, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(res.json().code).toBe("unauthorized");
    }
    const bad = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: "ApiKey not-a-real-key" },
      payload: { type: "Signup" },
    });
    expect(bad.statusCode).toBe(401);
  });
});
