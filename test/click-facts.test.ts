/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Tenancy, TestApp } from "./helpers/app.js";
import type { CatalogFixture } from "./helpers/catalog.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import { performanceReport } from "./helpers/reports.js";
import {
  cancelWaitingEvents,
  createHook,
  listEvents,
  seedTenantWithCatalog,
  setClickWebhooks,
  startWebhookTestApp,
} from "./helpers/webhooks.js";

// Facts of a click worked out without a CDN (docs/tracking-and-postbacks.md, "Facts of a click"):
// the country from the client address (behind TRUST_PROXY, from X-Forwarded-For), the device, OS
// and browser families from the user agent and client hints, and bots by user agent or by a
// data-center address, stored flagged and counted apart.

const CHROME_WINDOWS =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
const ANDROID_CHROME =
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36";
// Chrome's reduced user agent on Android: the model and version are frozen, the hints tell the rest.
const REDUCED_ANDROID =
  "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36";
const GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
// An address of a residential access network (Comcast, AS7922): a person.
const PERSON_IP = "73.0.0.1";
// An address of Amazon Web Services (AS16509): a data center.
const DATA_CENTER_IP = "52.95.110.1";

let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  // The test's own inject address (127.0.0.1) is the trusted proxy; the client is X-Forwarded-For's.
  t = await startWebhookTestApp({ env: { TRUST_PROXY: "true" }, app: { clicks: { intervalMs: 3_600_000 } } });
  rx = await startReceiver();
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
afterEach(() => cancelWaitingEvents(t));

interface FactsRow {
  ip: string;
  country: string | null;
  device: string | null;
  os: string | null;
  browser: string | null;
  bot_reason: string | null;
  is_unique: boolean;
  tracker_id: string | number | null;
}

async function clickFrom(
  cat: CatalogFixture,
  options: { ip: string; userAgent?: string; headers?: Record<string, string>; query?: string },
): Promise<FactsRow> {
  const res = await t.call({
    method: "GET",
    url: `/go/${cat.linkId}/${cat.trafficSourceId}${options.query ?? ""}`,
    headers: { "user-agent": options.userAgent ?? CHROME_WINDOWS, "x-forwarded-for": options.ip, ...options.headers },
  });
  expect(res.statusCode).toBe(302);
  const clickId = new URL(String(res.headers.location)).searchParams.get("cid");
  await t.ctx.tracking.clicks.flush();
  const [row] = await t.testDb.db.query<FactsRow>(
    "select ip, country, device, os, browser, bot_reason, is_unique, tracker_id from clicks where id = $1",
    [clickId],
  );
  if (row === undefined) throw new Error(`click ${clickId} not stored`);
  return row;
}

describe("country from the address", () => {
  // Addresses of each regional registry whose country is stable (checked against the packaged data).
  it.each([
    ["ARIN (Comcast)", "73.0.0.1", "US"],
    ["RIPE NCC (its own network)", "193.0.6.139", "NL"],
    ["APNIC (SoftBank)", "126.0.0.1", "JP"],
    ["LACNIC (NIC.br)", "200.160.2.3", "BR"],
    ["AFRINIC (a South African network)", "41.0.0.1", "ZA"],
    ["IPv6, RIPE NCC", "2001:67c:2e8:22::c100:68b", "NL"],
    ["IPv6, APNIC (WIDE)", "2001:200::1", "JP"],
  ])("a click through TRUST_PROXY from %s gets its country", async (_name, ip, country) => {
    const { cat } = await seedTenantWithCatalog(t);
    const row = await clickFrom(cat, { ip });
    expect(row.ip).toBe(ip);
    expect(row.country).toBe(country);
    expect(row.bot_reason).toBeNull();
  });

  it("a trusted CDN's country header wins over the address", async () => {
    const { cat } = await seedTenantWithCatalog(t);
    const row = await clickFrom(cat, { ip: "193.0.6.139", headers: { "cf-ipcountry": "fr" } });
    expect(row.country).toBe("FR");
  });

  it("a private or documentation address has no country", async () => {
    const { cat } = await seedTenantWithCatalog(t);
    expect((await clickFrom(cat, { ip: "10.1.2.3" })).country).toBeNull();
  });
});

describe("device, OS and browser", () => {
  it.each([
    ["a phone", IPHONE, {}, { device: "mobile", os: "iOS", browser: "Safari" }],
    ["an Android phone", ANDROID_CHROME, {}, { device: "mobile", os: "Android", browser: "Chrome" }],
    ["a desktop", CHROME_WINDOWS, {}, { device: "desktop", os: "Windows", browser: "Chrome" }],
    [
      "a reduced agent with client hints",
      REDUCED_ANDROID,
      {
        "sec-ch-ua": '"Chromium";v="126", "Google Chrome";v="126", "Not.A/Brand";v="24"',
        "sec-ch-ua-mobile": "?1",
        "sec-ch-ua-platform": '"Android"',
      },
      { device: "mobile", os: "Android", browser: "Chrome" },
    ],
  ])("%s is stored with its families", async (_name, userAgent, headers, expected) => {
    const { cat } = await seedTenantWithCatalog(t);
    const row = await clickFrom(cat, { ip: PERSON_IP, userAgent, headers });
    expect({ device: row.device, os: row.os, browser: row.browser }).toEqual(expected);
  });
});

describe("bots", () => {
  async function botStats(who: Tenancy) {
    const day = t.clock.now().toISOString().slice(0, 10);
    const report = await performanceReport(t, who, {
      stats: "clicks,uniqueClicks,botClicks",
      conversionDateFrom: day,
      conversionDateTo: day,
    });
    return report.data[0];
  }

  it("a crawler's user agent and a data-center address are bots with their reasons, counted apart", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    await setClickWebhooks(t, who, true);
    const path = "/facts-bots";
    await createHook(t, who, {
      name: "Click receiver",
      url: `${rx.base}${path}?click=\${clickId}`,
      conversionTypes: ["Click"],
    });

    const crawler = await clickFrom(cat, { ip: PERSON_IP, userAgent: GOOGLEBOT, query: "?tracker=crawler-tracker" });
    const dataCenter = await clickFrom(cat, { ip: DATA_CENTER_IP, query: "?tracker=datacenter-tracker" });
    const person = await clickFrom(cat, { ip: PERSON_IP, query: "?tracker=person-tracker" });

    expect(crawler).toMatchObject({ bot_reason: "user_agent", is_unique: false, tracker_id: null });
    expect(dataCenter).toMatchObject({ bot_reason: "data_center", is_unique: false, tracker_id: null, country: "US" });
    expect(person).toMatchObject({ bot_reason: null, is_unique: true });
    expect(person.tracker_id).not.toBeNull();

    // Neither bot created a tracker; the person's click did.
    const trackers = await t.testDb.db.query<{ name: string }>(
      "select name from trackers where tenant_id = $1 order by name",
      [who.tenantId],
    );
    expect(trackers.map((r) => r.name)).toEqual(["person-tracker"]);

    // Only the person's click fired the click webhook.
    const events = await listEvents(t, who);
    expect(events).toHaveLength(1);

    expect(await botStats(who)).toMatchObject({ clicks: 1, uniqueClicks: 1, botClicks: 2 });
  });

  it.each([
    ["IPv4, Hetzner", "5.9.1.1", "data_center"],
    ["IPv6, Hetzner", "2a01:4f8::1", "data_center"],
    ["IPv4 an IPv6 socket reports, Amazon", "::ffff:52.95.110.1", "data_center"],
    ["IPv6, RIPE NCC's own network (no hosting)", "2001:67c:2e8:22::c100:68b", null],
  ])("an address of %s is told by the ASN data", async (_name, ip, reason) => {
    const { cat } = await seedTenantWithCatalog(t);
    expect((await clickFrom(cat, { ip })).bot_reason).toBe(reason);
  });
});
