import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  cancelWaitingEvents,
  createHook,
  receiverPaths,
  seedTenantWithCatalog,
  startWebhookTestApp,
} from "./helpers/webhooks.js";

// Conversions and postbacks as an affiliate network's integration meets them: a default currency
// for a value sent without one, null for an absent value, type names in any case, unfilled click id
// macros refused, one answer for a repeated externalId, and the types documented
// (docs/conversions.md and the OpenAPI document).

const FORM = "application/x-www-form-urlencoded";
const RECORDABLE = [
  "Signup",
  "FirstTimeDeposit",
  "Qualifier",
  "Deposit",
  "CpaCommission",
  "RevShareCommission",
  "FlatFeeCommission",
];

let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  t = await startWebhookTestApp({ app: { clicks: { intervalMs: 3_600_000 } } });
  rx = await startReceiver();
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
afterEach(() => cancelWaitingEvents(t));

const path = receiverPaths("/integrator");

function postbackGet(key: string, query: Record<string, string>) {
  return t.call({ method: "GET", url: `/postback/${key}?${new URLSearchParams(query)}` });
}

function api(who: Tenancy, payload: Record<string, unknown>) {
  return t.call({ method: "POST", url: "/api/v1/conversions", headers: { authorization: who.apiKey }, payload });
}

async function countConversions(tenantId: string): Promise<number> {
  const [row] = await t.ctx.db.query<{ n: string }>("select count(*) as n from conversions where tenant_id = $1", [
    tenantId,
  ]);
  return Number(row?.n);
}

async function storedRow(id: string) {
  const [row] = await t.ctx.db.query<{ value: string | null; currency: string | null; type: string }>(
    "select value::text as value, currency, type from conversions where id = $1",
    [id],
  );
  return row;
}

describe("1. a value without a currency takes the tenant's default currency", () => {
  it("is USD unless changed; the record names the currency it was given (postback and API)", async () => {
    const who = await seedTenancy(t);
    const settings = await t.call({ method: "GET", url: "/api/v1/settings", headers: { authorization: who.apiKey } });
    expect(settings.statusCode, settings.body).toBe(200);
    expect(settings.json().data.defaultCurrency).toBe("USD");

    const pb = await postbackGet(who.postbackKey, { type: "Deposit", value: "10" });
    expect(pb.statusCode, pb.body).toBe(201);
    expect(pb.json()).toMatchObject({ status: "ok", value: 10, currency: "USD" });
    expect(await storedRow(pb.json().id)).toMatchObject({ value: "10.0000", currency: "USD" });

    const byApi = await api(who, { type: "Deposit", value: 7 });
    expect(byApi.statusCode, byApi.body).toBe(201);
    expect(byApi.json().data).toMatchObject({ value: 7, currency: "USD" });
  });

  it("PATCH /api/v1/settings changes it (any case); a given currency is kept; no value has no currency", async () => {
    const who = await seedTenancy(t);
    const patched = await t.call({
      method: "PATCH",
      url: "/api/v1/settings",
      headers: { authorization: who.apiKey },
      payload: { defaultCurrency: "eur" },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data.defaultCurrency).toBe("EUR");

    const form = await t.call({
      method: "POST",
      url: `/postback/${who.postbackKey}`,
      headers: { "content-type": FORM },
      payload: new URLSearchParams({ type: "Deposit", value: "12.5" }).toString(),
    });
    expect(form.statusCode, form.body).toBe(201);
    expect(await storedRow(form.json().id)).toMatchObject({ value: "12.5000", currency: "EUR" });

    const batch = await api(who, {
      items: [{ type: "Deposit", value: 1 }, { type: "Deposit", value: 2, currency: "GBP" }, { type: "Signup" }],
    });
    expect(batch.statusCode, batch.body).toBe(201);
    expect(batch.json().data.items.map((i: { currency: string | null }) => i.currency)).toEqual(["EUR", "GBP", null]);

    // Another tenant keeps its own default.
    const other = await seedTenancy(t);
    const theirs = await api(other, { type: "Deposit", value: 3 });
    expect(theirs.json().data.currency).toBe("USD");
  });

  it.each([
    ["EURO", /at most 3|more than 3/],
    ["XYZ", /'XYZ'.*ISO 4217/],
    ["", /./],
  ])("a default currency '%s' is a 400 naming defaultCurrency", async (code, reason) => {
    const who = await seedTenancy(t);
    const res = await t.call({
      method: "PATCH",
      url: "/api/v1/settings",
      headers: { authorization: who.apiKey },
      payload: { defaultCurrency: code },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe("validation_error");
    expect(res.json().data.errors[0].path).toBe("defaultCurrency");
    expect(res.json().message).toMatch(reason);
    const settings = await t.call({ method: "GET", url: "/api/v1/settings", headers: { authorization: who.apiKey } });
    expect(settings.json().data.defaultCurrency).toBe("USD");
  });

  it("changing it needs account.admin", async () => {
    const clerk = await seedTenancy(t, { permissions: ["conversions.update"] });
    const res = await t.call({
      method: "PATCH",
      url: "/api/v1/settings",
      headers: { authorization: clerk.bearer },
      payload: { defaultCurrency: "EUR" },
    });
    expect(res.statusCode, res.body).toBe(403);
  });
});

describe("2. absent is null, not zero", () => {
  it("stores NULL and answers value: null, by API and by postback", async () => {
    const who = await seedTenancy(t);
    const byApi = await api(who, { type: "Signup" });
    expect(byApi.statusCode, byApi.body).toBe(201);
    expect(byApi.json().data).toMatchObject({ value: null, currency: null });
    expect(await storedRow(byApi.json().data.id)).toMatchObject({ value: null, currency: null });

    const pb = await postbackGet(who.postbackKey, { type: "Signup", value: "" });
    expect(pb.statusCode, pb.body).toBe(201);
    expect(pb.json()).toMatchObject({ value: null, currency: null });
    expect(await storedRow(pb.json().id)).toMatchObject({ value: null });

    const read = await t.call({
      method: "GET",
      url: `/api/v1/conversions/${pb.json().id}`,
      headers: { authorization: who.apiKey },
    });
    expect(read.json().data.value).toBeNull();
    const list = await t.call({ method: "GET", url: "/api/v1/conversions", headers: { authorization: who.apiKey } });
    expect(list.json().data.map((c: { value: number | null }) => c.value)).toEqual([null, null]);
  });

  it("renders the eventValue placeholder (every syntax) as an empty string, and the POST payload sends null", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const [pGet, pPost] = [path("get-null"), path("post-null")];
    await createHook(t, who, {
      url: `${rx.base}${pGet}?a=\${eventValue}&b={{eventValue}}&c={{{eventValue}}}&cur=\${currencyCode}&k=1`,
      method: "GET",
    });
    await createHook(t, who, { url: `${rx.base}${pPost}`, method: "POST" });
    const res = await api(who, { type: "Signup" });
    expect(res.statusCode, res.body).toBe(201);
    await t.ctx.delivery.tick();

    expect(rx.at(pGet)).toHaveLength(1);
    const query = rx.at(pGet)[0]?.query;
    expect([query?.get("a"), query?.get("b"), query?.get("c"), query?.get("cur"), query?.get("k")]).toEqual([
      "",
      "",
      "",
      "",
      "1",
    ]);
    expect(rx.at(pPost)).toHaveLength(1);
    const payload = JSON.parse(rx.at(pPost)[0]?.body ?? "{}");
    expect(payload).toHaveProperty("eventValue", null);
    expect(payload).toHaveProperty("currency", null);
  });

  it("reports count a conversion without a value as 0 in the sums", async () => {
    const who = await seedTenancy(t);
    const cat: CatalogFixture = await seedCatalog(t, who);
    const clickId = await clickThrough(t, cat);
    const day = t.clock.now().toISOString().slice(0, 10);
    expect((await api(who, { type: "Deposit", clickId })).statusCode).toBe(201);
    expect((await api(who, { type: "Deposit", clickId, value: "2.5", currency: "USD" })).statusCode).toBe(201);
    expect((await api(who, { type: "CpaCommission", clickId })).statusCode).toBe(201);
    const res = await t.call({
      method: "GET",
      url: `/api/v1/reports/events/performance?conversionDateFrom=${day}&conversionDateTo=${day}&stats=deposits,depositAmount,cpaCommission`,
      headers: { authorization: who.apiKey },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual([{ deposits: 2, depositAmount: 2.5, cpaCommission: 0 }]);
  });
});

describe("3. type names in any case; Click is not recorded by a caller", () => {
  it("reads signup, DEPOSIT and firsttimedeposit as their types (postback GET, JSON, form; API one and batch)", async () => {
    const who = await seedTenancy(t);
    const get = await postbackGet(who.postbackKey, { type: "signup" });
    expect(get.statusCode, get.body).toBe(201);
    expect(get.json().type).toBe("Signup");
    const json = await t.call({
      method: "POST",
      url: `/postback/${who.postbackKey}`,
      payload: { type: "DEPOSIT", value: "1", currency: "EUR" },
    });
    expect(json.statusCode, json.body).toBe(201);
    expect(json.json().type).toBe("Deposit");
    const form = await t.call({
      method: "POST",
      url: `/postback/${who.postbackKey}`,
      headers: { "content-type": FORM },
      payload: "type=firsttimedeposit",
    });
    expect(form.statusCode, form.body).toBe(201);
    expect(form.json().type).toBe("FirstTimeDeposit");

    const one = await api(who, { type: "qualifier" });
    expect(one.statusCode, one.body).toBe(201);
    expect(one.json().data).toMatchObject({ type: "Qualifier", eventName: "Qualifier" });
    const batch = await api(who, {
      items: [{ type: "cpacommission", value: -1, currency: "EUR" }, { type: "SIGNUP" }],
    });
    expect(batch.statusCode, batch.body).toBe(201);
    expect(batch.json().data.items.map((i: { type: string }) => i.type)).toEqual(["CpaCommission", "Signup"]);
    expect(await storedRow(one.json().data.id)).toMatchObject({ type: "Qualifier" });
  });

  it.each(["Click", "click"])("type %s is a 400 naming type and listing the accepted types", async (type) => {
    const who = await seedTenancy(t);
    const answers = [
      await postbackGet(who.postbackKey, { type }),
      await t.call({ method: "POST", url: `/postback/${who.postbackKey}`, payload: { type } }),
    ];
    for (const res of answers) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().status).toBe("error");
      expect(res.json().message).toMatch(/^type /);
      for (const name of RECORDABLE) expect(res.json().message).toContain(name);
    }
    const byApi = await api(who, { type });
    expect(byApi.statusCode, byApi.body).toBe(400);
    expect(byApi.json().data.errors[0].path).toBe("type");
    for (const name of RECORDABLE) expect(byApi.json().message).toContain(`'${name}'`);
    const inBatch = await api(who, { items: [{ type: "Signup" }, { type }] });
    expect(inBatch.statusCode, inBatch.body).toBe(400);
    expect(inBatch.json().data.errors[0].path).toBe("items[1].type");
    expect(await countConversions(who.tenantId)).toBe(0);
  });
});

describe("4. an unfilled click id macro is refused, nothing recorded", () => {
  const MACROS = [
    "<clickId>",
    "{clickId}",
    "{{clickId}}",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal macro a network leaves unfilled
    "${clickId}",
    "%7BclickId%7D",
    "%7bclick_id%7d",
    "[clickId]",
    "#clickId#",
    "{click_id}",
    "{ transaction_id }",
    "%subid%",
    "$aff_sub$",
    "[[CLICK.ID]]",
  ];
  it.each(MACROS)("clickId %s is a 400 explaining the network did not fill its macro", async (macro) => {
    const who = await seedTenancy(t);
    const answers = [
      await postbackGet(who.postbackKey, { type: "Deposit", clickId: macro, value: "5", currency: "EUR" }),
      await t.call({
        method: "POST",
        url: `/postback/${who.postbackKey}`,
        payload: { type: "Signup", clickId: macro },
      }),
    ];
    for (const res of answers) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().status).toBe("error");
      expect(res.json().message).toMatch(/^clickId .*did not fill its click id macro/);
    }
    const byApi = await api(who, { type: "Signup", clickId: macro });
    expect(byApi.statusCode, byApi.body).toBe(400);
    expect(byApi.json().data.errors[0]).toMatchObject({ path: "clickId", message: expect.stringMatching(/macro/) });
    expect(await countConversions(who.tenantId)).toBe(0);
  });

  it("the start banner's postback URL pasted as printed records nothing", async () => {
    const who = await seedTenancy(t);
    const res = await t.call({
      method: "GET",
      url: `/postback/${who.postbackKey}?clickId=<clickId>&type=Deposit&value=<value>&currency=EUR`,
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(await countConversions(who.tenantId)).toBe(0);
  });

  it.each(["clk_abc", "AB-123_x", "order#1", "{partial", "a{clickId}b", "<>"])("clickId %s is recorded", async (id) => {
    const who = await seedTenancy(t);
    const res = await postbackGet(who.postbackKey, { type: "Signup", clickId: id });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().attributed).toBe(false);
  });
});

describe("5. one outcome, one answer", () => {
  it("a repeated externalId on the postback answers duplicate: true and the first record's id, as the API does", async () => {
    const who = await seedTenancy(t);
    const first = await postbackGet(who.postbackKey, { type: "Deposit", value: "10", externalId: "net-1" });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ status: "ok", duplicate: false });
    const id = first.json().id;
    expect(id).toMatch(/^cnv_/);
    expect(first.json().conversionId).toBe(id);

    const again = await t.call({
      method: "POST",
      url: `/postback/${who.postbackKey}`,
      payload: { type: "Deposit", value: "99", externalId: "net-1" },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ status: "duplicate", duplicate: true, id, conversionId: id, value: 10 });

    const viaApi = await api(who, { type: "Deposit", value: 99, externalId: "net-1" });
    expect(viaApi.statusCode, viaApi.body).toBe(200);
    expect(viaApi.json().data).toMatchObject({ duplicate: true, id, value: 10, currency: "USD" });
    expect(await countConversions(who.tenantId)).toBe(1);
  });
});

describe("6. the types documented", () => {
  type Schema = { enum?: string[]; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[] };
  type Operation = {
    parameters?: { name: string; schema?: Schema }[];
    requestBody?: { content: Record<string, { schema: Schema }> };
    responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
  };
  let doc: { paths: Record<string, Record<string, Operation>> };
  beforeAll(async () => {
    const res = await t.app.inject({ method: "GET", url: "/api/swagger/v1/swagger.json" });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });

  const schemaOf = (op: Operation | undefined, status: string) =>
    Object.values(op?.responses[status]?.content ?? {})[0]?.schema;

  it("POST /api/v1/conversions: request type is the recordable enum, answer type every type", () => {
    const post = doc.paths["/api/v1/conversions"]?.post;
    const body = Object.values(post?.requestBody?.content ?? {})[0]?.schema;
    expect(body?.properties?.type?.enum).toEqual(RECORDABLE);
    expect(body?.properties?.items?.items?.properties?.type?.enum).toEqual(RECORDABLE);
    const answer = schemaOf(post, "201")?.properties?.data;
    const single = answer?.anyOf?.[0] ?? answer;
    expect(single?.properties?.type?.enum).toEqual(["Click", ...RECORDABLE]);
    expect(single?.properties?.duplicate).toBeDefined();
  });

  it("the postback: type parameter and answer carry the enum; the answer has id and duplicate", () => {
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith("/postback/"));
    expect(paths).toHaveLength(1);
    const ops = doc.paths[paths[0] as string] ?? {};
    const type = ops.get?.parameters?.find((p) => p.name === "type");
    expect(type?.schema?.enum).toEqual(RECORDABLE);
    const postBody = Object.values(ops.post?.requestBody?.content ?? {})[0]?.schema;
    expect(postBody?.properties?.type?.enum).toEqual(RECORDABLE);
    for (const op of [ops.get, ops.post]) {
      const answer = schemaOf(op, "201");
      expect(answer?.properties?.type?.enum).toEqual(RECORDABLE);
      expect(Object.keys(answer?.properties ?? {})).toEqual(expect.arrayContaining(["id", "duplicate", "status"]));
    }
  });

  it("docs/conversions.md lists every type, and README links it", () => {
    const text = readFileSync(new URL("../docs/conversions.md", import.meta.url), "utf8");
    for (const type of ["Click", ...RECORDABLE]) expect(text).toContain(`\`${type}\``);
    expect(text).toMatch(/defaultCurrency/);
    expect(text).toMatch(/duplicate/);
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    expect(readme).toContain("(docs/conversions.md)");
  });
});
