/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Tenancy, TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, createVia } from "./helpers/catalog.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  cancelWaitingEvents,
  convert,
  createHook,
  listEvents,
  PAYLOAD_KEYS,
  receiverPaths,
  seedTenantWithCatalog,
  setClickWebhooks,
  startWebhookTestApp,
  suspendHook,
  type TenantWithCatalog,
  WEBHOOKS_API,
} from "./helpers/webhooks.js";

// Click webhooks (docs/outgoing-webhooks.md: Click is offered in a webhook's type list, and fires,
// only where the tenant has click webhooks turned on). A real click through /go, with the click
// buffer written by hand, makes one delivery event per matching webhook, of type Click, carrying
// the click id and no conversion; the worker is ticked by hand against a real loopback receiver.

let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  // Clicks stay in the buffer until a test writes them (flush), so each test knows when the
  // click batch's transaction (and its fan-out) runs.
  t = await startWebhookTestApp({ app: { clicks: { intervalMs: 3_600_000 } } });
  rx = await startReceiver();
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
afterEach(() => cancelWaitingEvents(t));

const path = receiverPaths("/clk");
const tick = () => t.ctx.delivery.tick();

/** A tenant with a catalog; click webhooks turned on through the admin API unless `clickWebhooks` is false. */
async function tenant(clickWebhooks = true): Promise<TenantWithCatalog> {
  const fixture = await seedTenantWithCatalog(t);
  if (clickWebhooks) await setClickWebhooks(t, fixture.who, true);
  return fixture;
}

function postHook(who: Tenancy, body: Record<string, unknown>) {
  return t.call({
    method: "POST",
    url: `${WEBHOOKS_API}/settings`,
    headers: { authorization: who.apiKey },
    payload: { name: "Click receiver", method: "GET", ...body },
  });
}

/** Creates a webhook named as postHook names it; returns its id. */
const clickHook = async (who: Tenancy, body: Record<string, unknown>) =>
  (await createHook(t, who, { name: "Click receiver", ...body })).id;

/** Clicks through /go (on the fixture's source unless another is given) and writes the click buffer. */
async function clickAndWrite(cat: CatalogFixture, query = "", sourceId = cat.trafficSourceId): Promise<string> {
  const clickId = await clickThrough(t, { ...cat, trafficSourceId: sourceId }, query);
  await t.ctx.tracking.clicks.flush();
  return clickId;
}

const eventsOfClick = (who: Tenancy, clickId: string) => listEvents(t, who, `?clickId=${clickId}`);

describe("Click webhooks", () => {
  it("a click fires a webhook filtered on Click: one Click event with the click id and no conversion", async () => {
    const { who, cat } = await tenant();
    const p = path("get");
    const hook = await clickHook(who, {
      url:
        `${rx.base}${p}?click=\${clickId}&type=\${conversionType}&conv=\${conversionId}&event=\${eventName}` +
        "&gclid=${gclid}&source=${trafficSourceId}&account={{account}}&ua=${clientUserAgent}",
      conversionTypes: ["Click"],
      eventNames: { Click: "visit" },
    });

    const clickId = await clickAndWrite(cat, "?gclid=G-123");
    const events = await eventsOfClick(who, clickId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      webhookId: hook,
      conversionType: "Click",
      clickId,
      conversionId: null,
      status: "Queued",
      attempts: 0,
      simulated: false,
    });

    expect(await tick()).toBe(1);
    expect(rx.at(p)).toHaveLength(1);
    const [received] = rx.at(p);
    expect(received?.method).toBe("GET");
    expect(received?.body).toBe("");
    expect(received?.query.get("click")).toBe(clickId);
    expect(received?.query.get("type")).toBe("Click");
    expect(received?.query.get("conv")).toBe("");
    expect(received?.query.get("event")).toBe("visit");
    expect(received?.query.get("gclid")).toBe("G-123");
    expect(received?.query.get("source")).toBe(String(cat.trafficSourceId));
    expect(received?.query.get("account")).toBe("Account");
    expect(received?.query.get("ua")).toMatch(/^Mozilla\/5\.0/);
    expect((await eventsOfClick(who, clickId))[0]).toMatchObject({ status: "Delivered", attempts: 1 });

    // A conversion on that click is not a Click: this webhook does not fire for it.
    const conversionId = await convert(t, who, { type: "Signup", clickId });
    expect(await listEvents(t, who, `?conversionId=${conversionId}`)).toEqual([]);
    expect(await eventsOfClick(who, clickId)).toHaveLength(1);
  });

  it("a POST webhook with an empty type filter gets the click as JSON with conversionType Click", async () => {
    const { who, cat } = await tenant();
    const [pAll, pDeposit] = [path("post-all"), path("deposit-only")];
    const all = await clickHook(who, { url: `${rx.base}${pAll}`, method: "POST" });
    await clickHook(who, { url: `${rx.base}${pDeposit}`, method: "POST", conversionTypes: ["Deposit"] });

    const clickId = await clickAndWrite(cat, "?fbclid=FB-1&pa=sub-a&pb=sub-b&ext=ext-9");
    const events = await eventsOfClick(who, clickId);
    expect(events.map((e) => [e.webhookId, e.conversionType, e.conversionId])).toEqual([[all, "Click", null]]);

    expect(await tick()).toBe(1);
    expect(rx.at(pDeposit)).toEqual([]);
    const [received] = rx.at(pAll);
    expect(received?.method).toBe("POST");
    expect(received?.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(received?.body ?? "null");
    expect(Object.keys(body).sort()).toEqual(PAYLOAD_KEYS);
    expect(body).toMatchObject({
      conversionId: null,
      conversionType: "Click",
      eventName: "Click",
      clickId,
      account: { id: cat.accountId, name: "Account" },
      brand: { id: cat.brandId, name: "Brand" },
      program: { id: cat.programId, name: "Program" },
      trafficSource: { id: cat.trafficSourceId, name: "Source" },
      attribution: { gclid: null, fbclid: "FB-1", parameterA: "sub-a", parameterB: "sub-b", externalClickId: "ext-9" },
      pageViews: [],
    });
    expect(body.clickDate).toBe(body.eventTime);
    expect(Date.parse(body.clickDate)).not.toBeNaN();
  });

  it("makes one event per click of a batch, each with its own click id", async () => {
    const { who, cat } = await tenant();
    const p = path("batch");
    await clickHook(who, { url: `${rx.base}${p}?click=\${clickId}`, conversionTypes: ["Click"] });
    const clicks = [
      await clickThrough(t, cat, "?pa=1"),
      await clickThrough(t, cat, "?pa=2"),
      await clickThrough(t, cat, "?pa=3"),
    ];
    // Nothing before the batch is written.
    expect(await listEvents(t, who)).toEqual([]);
    await t.ctx.tracking.clicks.flush();
    const events = await listEvents(t, who);
    expect(events.map((e) => e.clickId).sort()).toEqual([...clicks].sort());
    expect(await tick()).toBe(3);
    expect(
      rx
        .at(p)
        .map((r) => r.query.get("click"))
        .sort(),
    ).toEqual([...clicks].sort());
  });

  it("a tenant without click webhooks gets no Click events and cannot save Click in the type list", async () => {
    const { who, cat } = await tenant(false);
    const p = path("no-entitlement");
    const all = await clickHook(who, { url: `${rx.base}${p}?click=\${clickId}` });

    const refused = await postHook(who, { url: `${rx.base}${p}`, conversionTypes: ["Click"] });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().code).toBe("validation_error");
    expect(refused.json().message).toContain("Click");

    const first = await clickAndWrite(cat);
    expect(await eventsOfClick(who, first)).toEqual([]);
    expect(await tick()).toBe(0);
    expect(rx.at(p)).toEqual([]);

    // Turned on: the same webhook (empty filter) fires for clicks; turned off again: silent,
    // even for a webhook that lists Click.
    await setClickWebhooks(t, who, true);
    const clickOnly = await clickHook(who, { url: `${rx.base}${p}?click=\${clickId}`, conversionTypes: ["Click"] });
    const second = await clickAndWrite(cat);
    expect((await eventsOfClick(who, second)).map((e) => e.webhookId).sort()).toEqual([all, clickOnly].sort());
    await setClickWebhooks(t, who, false);
    const third = await clickAndWrite(cat);
    expect(await eventsOfClick(who, third)).toEqual([]);

    expect(await tick()).toBe(2);
    expect(rx.at(p).map((r) => r.query.get("click"))).toEqual([second, second]);
  });

  it("a source-level webhook fires only for clicks on its source", async () => {
    const { who, cat } = await tenant();
    const otherSource = await createVia(t, who, "traffic-sources", { name: "Other source" });
    const [pMine, pOther, pAffiliate] = [path("mine"), path("other"), path("affiliate")];
    const mine = await clickHook(who, {
      url: `${rx.base}${pMine}?click=\${clickId}`,
      conversionTypes: ["Click"],
      trafficSourceId: cat.trafficSourceId,
    });
    const other = await clickHook(who, {
      url: `${rx.base}${pOther}?click=\${clickId}`,
      conversionTypes: ["Click"],
      trafficSourceId: otherSource,
    });
    const affiliate = await clickHook(who, { url: `${rx.base}${pAffiliate}?click=\${clickId}` });

    const onMine = await clickAndWrite(cat);
    const onOther = await clickAndWrite(cat, "", otherSource);
    const hooksOf = async (clickId: string) => (await eventsOfClick(who, clickId)).map((e) => e.webhookId).sort();
    expect(await hooksOf(onMine)).toEqual([mine, affiliate].sort());
    expect(await hooksOf(onOther)).toEqual([other, affiliate].sort());

    expect(await tick()).toBe(4);
    expect(rx.at(pMine).map((r) => r.query.get("click"))).toEqual([onMine]);
    expect(rx.at(pOther).map((r) => r.query.get("click"))).toEqual([onOther]);
    expect(
      rx
        .at(pAffiliate)
        .map((r) => r.query.get("click"))
        .sort(),
    ).toEqual([onMine, onOther].sort());
  });

  it("respects the attribution-source filter", async () => {
    const { who, cat } = await tenant();
    const p = path("google-only");
    const hook = await clickHook(who, {
      url: `${rx.base}${p}?click=\${clickId}`,
      conversionTypes: ["Click"],
      attributionSources: ["google"],
    });
    const google = await clickAndWrite(cat, "?gclid=G-1");
    const direct = await clickAndWrite(cat);
    expect((await eventsOfClick(who, google)).map((e) => e.webhookId)).toEqual([hook]);
    expect(await eventsOfClick(who, direct)).toEqual([]);
  });

  it("a Disabled webhook creates nothing; a Suspended one creates a Paused Click event, never sent", async () => {
    const { who, cat } = await tenant();
    const [pDisabled, pSuspended] = [path("disabled"), path("suspended")];
    await clickHook(who, { url: `${rx.base}${pDisabled}`, conversionTypes: ["Click"], status: "Disabled" });
    const suspended = await clickHook(who, { url: `${rx.base}${pSuspended}`, conversionTypes: ["Click"] });
    await suspendHook(t, suspended);

    const clickId = await clickAndWrite(cat);
    const events = await eventsOfClick(who, clickId);
    expect(events.map((e) => [e.webhookId, e.status])).toEqual([[suspended, "Paused"]]);
    expect(await tick()).toBe(0);
    expect(rx.at(pDisabled)).toEqual([]);
    expect(rx.at(pSuspended)).toEqual([]);
  });

  it("a bot's visit is not a counted click and fires nothing", async () => {
    const { who, cat } = await tenant();
    await clickHook(who, { url: `${rx.base}${path("bots")}`, conversionTypes: ["Click"] });
    const res = await t.call({
      method: "GET",
      url: `/go/${cat.linkId}/${cat.trafficSourceId}`,
      headers: { "user-agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" },
    });
    expect(res.statusCode).toBe(302);
    await t.ctx.tracking.clicks.flush();
    expect(await listEvents(t, who)).toEqual([]);
  });
});
