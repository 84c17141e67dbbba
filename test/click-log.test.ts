import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, createVia, seedCatalog } from "./helpers/catalog.js";

// GET /api/v1/clicks and /clicks/{clickId}: the click log with each click's facts, its filters and
// window bound, the address shown as its network only, a click's page views and conversions, and
// tenants kept apart.

const PHONE =
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36";
const CRAWLER = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

let t: TestApp;
let who: Tenancy;
let other: Tenancy;
let cat: CatalogFixture;
let desktopClick: string;
let phoneClick: string;
let otherSource: number;

interface Click {
  id: string;
  linkId: number;
  trafficSourceId: number;
  device: string | null;
  os: string | null;
  browser: string | null;
  bot: boolean;
  botReason: string | null;
  ip: string | null;
  parameterA: string | null;
  pageViews?: { url: string }[];
  conversions?: { id: string; type: string; status: string }[];
}

async function go(userAgent: string, query = "", sourceId = cat.trafficSourceId): Promise<string | null> {
  const res = await t.call({
    method: "GET",
    url: `/go/${cat.linkId}/${sourceId}${query}`,
    headers: { "user-agent": userAgent },
    remoteAddress: "203.0.113.77",
  });
  expect(res.statusCode).toBe(302);
  return new URL(String(res.headers.location)).searchParams.get("cid");
}

beforeAll(async () => {
  t = await startTestApp();
  who = await seedTenancy(t);
  other = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  otherSource = await createVia(t, who, "traffic-sources", { name: "Second source" });
  desktopClick = await clickThrough(t, cat, "?pa=camp-7");
  phoneClick = (await go(PHONE, "?pa=camp-9", otherSource)) ?? "";
  await go(CRAWLER);
  await t.ctx.tracking.clicks.flush();
  const res = await t.call({
    method: "POST",
    url: "/api/v1/conversions",
    headers: { authorization: who.apiKey },
    payload: { type: "Signup", clickId: phoneClick, externalId: "cl-1" },
  });
  expect(res.statusCode, res.body).toBe(201);
});
afterAll(async () => t.close());

async function clicks(query: string, as = who.bearer): Promise<{ status: number; items: Click[]; body: string }> {
  const res = await t.call({ method: "GET", url: `/api/v1/clicks?${query}`, headers: { authorization: as } });
  return { status: res.statusCode, items: res.statusCode === 200 ? res.json().data : [], body: res.body };
}

describe("the click log", () => {
  it("lists the tenant's clicks newest first with their facts, bots included and flagged", async () => {
    const { items } = await clicks("");
    expect(items).toHaveLength(3);
    const phone = items.find((c) => c.id === phoneClick);
    expect(phone).toMatchObject({
      device: "mobile",
      os: "Android",
      browser: "Chrome",
      bot: false,
      parameterA: "camp-9",
    });
    const bot = items.find((c) => c.bot);
    expect(bot?.botReason).toBe("user_agent");
    // The address is its network only.
    expect(phone?.ip).toBe("203.0.113.0");
  });

  it("filters by bot, device, traffic source, link and click id", async () => {
    expect((await clicks("bot=true")).items).toHaveLength(1);
    expect((await clicks("bot=false")).items.map((c) => c.id).sort()).toEqual([desktopClick, phoneClick].sort());
    expect((await clicks("device=mobile")).items.map((c) => c.id)).toEqual([phoneClick]);
    expect((await clicks(`trafficSourceId=${otherSource}`)).items.map((c) => c.id)).toEqual([phoneClick]);
    expect((await clicks(`linkId=${cat.linkId}`)).items).toHaveLength(3);
    expect((await clicks(`clickId=${desktopClick}`)).items.map((c) => c.id)).toEqual([desktopClick]);
    expect((await clicks("dateTo=2000-01-01&dateFrom=1999-12-31")).items).toEqual([]);
  });

  it("answers one click with its page views and conversions", async () => {
    const res = await t.call({
      method: "GET",
      url: `/api/v1/clicks/${phoneClick}`,
      headers: { authorization: who.bearer },
    });
    expect(res.statusCode, res.body).toBe(200);
    const click = res.json().data as Click;
    expect(click.conversions).toEqual([expect.objectContaining({ type: "Signup", status: "approved" })]);
    expect(click.pageViews).toEqual([]);
  });

  it("keeps tenants apart", async () => {
    expect((await clicks("", other.bearer)).items).toEqual([]);
    const res = await t.call({
      method: "GET",
      url: `/api/v1/clicks/${phoneClick}`,
      headers: { authorization: other.bearer },
    });
    expect(res.statusCode).toBe(404);
  });

  it("bounds the window and refuses bad filters naming the field", async () => {
    const long = await clicks("dateFrom=2026-01-01&dateTo=2026-03-01");
    expect(long.status).toBe(400);
    expect(long.body).toContain("dateFrom");
    for (const [query, field] of [
      ["device=fridge", "device"],
      ["country=USA", "country"],
      ["linkId=abc", "linkId"],
      ["bot=maybe", "bot"],
    ]) {
      const bad = await clicks(query ?? "");
      expect(bad.status, query).toBe(400);
      expect(bad.body).toContain(field);
    }
  });
});
