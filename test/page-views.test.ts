import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";

// POST /collect (docs/tracking-and-postbacks.md): page views from landing pages, and how the conversion
// detail shows the ones that led to it.

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

function collect(payload: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.call({ method: "POST", url: "/collect", headers: { origin: "https://brand.example", ...headers }, payload });
}

interface StoredView {
  tenant_id: string;
  click_id: string;
  url: string;
  title: string | null;
  referrer: string | null;
  at: Date;
}

async function viewsOf(clickId: string): Promise<StoredView[]> {
  return t.ctx.db.query<StoredView>(
    "select tenant_id, click_id, url, title, referrer, at from page_views where click_id = $1 order by at, id",
    [clickId],
  );
}

describe("POST /collect", () => {
  it("records a page view against a click made a moment ago, in the click's tenant", async () => {
    const other = await seedTenancy(t);
    const otherCat = await seedCatalog(t, other);
    const clickId = await clickThrough(t, otherCat, "?gclid=PV");
    // The click has not been written yet: /collect must see to it.
    expect(t.ctx.tracking.clicks.holds(clickId)).toBe(true);
    t.clock.set("2026-05-05T05:05:05.000Z");
    let res: Awaited<ReturnType<typeof collect>>;
    try {
      res = await collect({
        clickId,
        url: "https://brand.example/landing?cid=x",
        title: "Welcome",
        referrer: "https://www.google.com/",
      });
    } finally {
      t.clock.set(new Date());
    }
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers["access-control-allow-origin"]).toBe("*");
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ status: "ok" });
    expect(body.id).toMatch(/^pv_/);

    const views = await viewsOf(clickId);
    expect(views).toHaveLength(1);
    expect(views[0]).toMatchObject({
      tenant_id: other.tenantId,
      click_id: clickId,
      url: "https://brand.example/landing?cid=x",
      title: "Welcome",
      referrer: "https://www.google.com/",
    });
    expect(new Date(views[0]?.at as Date).toISOString()).toBe("2026-05-05T05:05:05.000Z");
  });

  it("title and referrer are optional", async () => {
    const clickId = await clickThrough(t, cat);
    const res = await collect({ clickId, url: "https://brand.example/only-url" });
    expect(res.statusCode, res.body).toBe(201);
    const views = await viewsOf(clickId);
    expect(views.map((v) => [v.url, v.title, v.referrer])).toEqual([["https://brand.example/only-url", null, null]]);
  });

  // Under the app's ajv coerceTypes the String branch of `Union([String, Null])` would coerce null
  // to "" (src/features/tracking/public-routes.ts PageViewBody): an explicit null stays null.
  it("an explicit null title and referrer are stored as null", async () => {
    const clickId = await clickThrough(t, cat);
    const res = await collect({ clickId, url: "https://brand.example/nulls", title: null, referrer: null });
    expect(res.statusCode, res.body).toBe(201);
    const views = await viewsOf(clickId);
    expect(views.map((v) => [v.title, v.referrer])).toEqual([[null, null]]);
  });

  it.each([
    ["an unknown click id", "no-such-click"],
    ["a click id that looks real", "clk_0000000000000000000000000z"],
  ])("%s is 404 and stores nothing", async (_label, clickId) => {
    const res = await collect({ clickId, url: "https://brand.example/" });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.headers["access-control-allow-origin"]).toBe("*");
    expect(JSON.parse(res.body)).toMatchObject({ status: "error", message: expect.stringContaining(clickId) });
    expect(await viewsOf(clickId)).toHaveLength(0);
  });

  it("a bad body is 400 and stores nothing", async () => {
    const clickId = await clickThrough(t, cat);
    for (const payload of [{ clickId }, { url: "https://brand.example/" }, { clickId, url: "" }]) {
      const res = await collect(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.headers["access-control-allow-origin"]).toBe("*");
    }
    expect(await viewsOf(clickId)).toHaveLength(0);
  });

  it("answers an OPTIONS preflight with 204 and open CORS for POST", async () => {
    const res = await t.call({
      method: "OPTIONS",
      url: "/collect",
      headers: {
        origin: "https://landing.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe("");
    expect(res.headers["access-control-allow-origin"]).toBe("*");
    const methods = String(res.headers["access-control-allow-methods"])
      .split(",")
      .map((m) => m.trim().toUpperCase());
    expect(methods).toContain("POST");
    expect(String(res.headers["access-control-allow-headers"]).toLowerCase()).toContain("content-type");
  });

  it.each(["text/plain", "text/plain;charset=UTF-8"])(
    "accepts JSON sent as %s (navigator.sendBeacon)",
    async (type) => {
      const clickId = await clickThrough(t, cat);
      const res = await t.call({
        method: "POST",
        url: "/collect",
        headers: { "content-type": type, origin: "https://brand.example" },
        payload: JSON.stringify({ clickId, url: "https://brand.example/beacon", title: "Beacon" }),
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.headers["access-control-allow-origin"]).toBe("*");
      expect((await viewsOf(clickId)).map((v) => [v.url, v.title])).toEqual([
        ["https://brand.example/beacon", "Beacon"],
      ]);
    },
  );

  it("text/plain that is not JSON is 400", async () => {
    const res = await t.call({
      method: "POST",
      url: "/collect",
      headers: { "content-type": "text/plain" },
      payload: "clickId=abc",
    });
    expect(res.statusCode).toBe(400);
  });
});

describe("page views in the conversion detail", () => {
  const T0 = Date.parse("2026-04-01T09:00:00.000Z");
  const at = (seconds: number) => new Date(T0 + seconds * 1000);

  async function viewAt(clickId: string, seconds: number, url: string): Promise<void> {
    t.clock.set(at(seconds));
    const res = await collect({ clickId, url, title: `title ${url}`, referrer: "https://search.example/" });
    expect(res.statusCode, res.body).toBe(201);
  }

  async function detail(id: string, as: Tenancy = who) {
    const res = await t.call({
      method: "GET",
      url: `/api/v1/conversions/${id}`,
      headers: { authorization: as.apiKey },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  it("lists the click's page views oldest first, only those at or before occurredAt", async () => {
    const clickId = await clickThrough(t, cat, "?gclid=DETAIL");
    const noise = await clickThrough(t, cat);
    try {
      // Reported out of order: the list follows the time of the view, not the order of arrival.
      await viewAt(clickId, 20, "https://brand.example/c");
      await viewAt(clickId, 10, "https://brand.example/b");
      await viewAt(clickId, 0, "https://brand.example/a");
      await viewAt(clickId, 31, "https://brand.example/after");
      await viewAt(noise, 15, "https://brand.example/other-click");

      t.clock.set(at(60));
      const res = await t.call({
        method: "POST",
        url: "/api/v1/conversions",
        headers: { authorization: who.apiKey },
        payload: { type: "Signup", clickId, occurredAt: at(20).toISOString() },
      });
      expect(res.statusCode, res.body).toBe(201);
      const conversion = await detail(res.json().data.id);
      expect(conversion.pageViews).toEqual([
        {
          url: "https://brand.example/a",
          title: "title https://brand.example/a",
          referrer: "https://search.example/",
          at: at(0).toISOString(),
        },
        {
          url: "https://brand.example/b",
          title: "title https://brand.example/b",
          referrer: "https://search.example/",
          at: at(10).toISOString(),
        },
        {
          url: "https://brand.example/c",
          title: "title https://brand.example/c",
          referrer: "https://search.example/",
          at: at(20).toISOString(),
        },
      ]);

      // A later conversion of the same click sees the later view too.
      const later = await t.call({
        method: "POST",
        url: "/api/v1/conversions",
        headers: { authorization: who.apiKey },
        payload: { type: "Deposit", value: 5, currency: "EUR", clickId },
      });
      expect(later.statusCode, later.body).toBe(201);
      const laterDetail = await detail(later.json().data.id);
      expect(laterDetail.pageViews.map((v: { url: string }) => v.url)).toEqual([
        "https://brand.example/a",
        "https://brand.example/b",
        "https://brand.example/c",
        "https://brand.example/after",
      ]);

      // The list of conversions does not carry them.
      const list = await t.call({
        method: "GET",
        url: `/api/v1/conversions?clickId=${clickId}`,
        headers: { authorization: who.apiKey },
      });
      expect(list.json().data).toHaveLength(2);
      for (const item of list.json().data) expect(item).not.toHaveProperty("pageViews");
    } finally {
      t.clock.set(new Date());
    }
  });

  it("a conversion without a click, or with another tenant's click, shows no page views", async () => {
    const clickId = await clickThrough(t, cat);
    const view = await collect({ clickId, url: "https://brand.example/mine" });
    expect(view.statusCode).toBe(201);

    const stranger = await seedTenancy(t);
    const theirs = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: stranger.apiKey },
      payload: { type: "Signup", clickId },
    });
    expect(theirs.statusCode, theirs.body).toBe(201);
    expect(theirs.json().data.attributed).toBe(false);
    expect((await detail(theirs.json().data.id, stranger)).pageViews).toEqual([]);

    const none = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { type: "Signup" },
    });
    expect((await detail(none.json().data.id)).pageViews).toEqual([]);

    // The owner's conversion of that click does show it.
    const mine = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { type: "Signup", clickId },
    });
    expect((await detail(mine.json().data.id)).pageViews.map((v: { url: string }) => v.url)).toEqual([
      "https://brand.example/mine",
    ]);
  });
});
