import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { seedDemoRates } from "../src/features/demo/rates.js";
import { seedDemo } from "../src/features/demo/seed.js";
import { parseEcbRates } from "../src/features/exchange-rates/ecb.js";
import { exchangeRatesJob, ratesInForce, storeRates } from "../src/features/exchange-rates/index.js";
import { runJob } from "../src/platform/jobs.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { freePort } from "./helpers/process.js";
import { signInPerson } from "./helpers/webhooks.js";

// Exchange rates (docs/money-and-time.md, "Exchange rates"): a tenant's own rates (PUT), the rates
// in force on a day (GET: the latest on or before it, the tenant's winning on the same day), and
// the job that stores the ECB's euro reference rates, fed here by a loopback server in the ECB's
// format. The job tests use days of November 2026 and the route tests days of 2025, so that
// neither's reference rates are the latest on the other's days.

/** One answer of the loopback ECB: status and body, sent with a Content-Length or in chunks. */
interface Served {
  status: number;
  body: string;
  chunked?: boolean;
}

let t: TestApp;
let a: Tenancy;
let b: Tenancy;
let ecb: Server;
let ecbBase: string;
const served = new Map<string, Served>();
const hits = new Map<string, number>();

/** An ECB reference rates file of these days (time -> code -> rate), as the ECB writes it. */
function ecbFile(days: Record<string, Record<string, string>>, quote = "'"): string {
  const q = (value: string) => `${quote}${value}${quote}`;
  const blocks = Object.entries(days).map(
    ([time, rates]) =>
      `\t\t<Cube time=${q(time)}>\n${Object.entries(rates)
        .map(([code, rate]) => `\t\t\t<Cube currency=${q(code)} rate=${q(rate)}/>\n`)
        .join("")}\t\t</Cube>\n`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
\t<gesmes:subject>Reference rates</gesmes:subject>
\t<gesmes:Sender>
\t\t<gesmes:name>European Central Bank</gesmes:name>
\t</gesmes:Sender>
\t<Cube>
${blocks.join("")}\t</Cube>
</gesmes:Envelope>
`;
}

const HISTORY = ecbFile({
  "2026-11-26": { USD: "1.0420", JPY: "161.20", GBP: "0.8300" },
  "2026-11-25": { USD: "1.0401", JPY: "160.95", GBP: "0.8291" },
  "2026-11-24": { USD: "1.0388", JPY: "160.40", GBP: "0.8288" },
});
const DAILY = ecbFile({ "2026-11-27": { USD: "1.0412", JPY: "161.55", GBP: "0.8312", CHF: "0.9310" } }, '"');

async function getRates(who: { apiKey?: string; bearer?: string }, date?: string) {
  return t.call({
    method: "GET",
    url: `/api/v1/exchange-rates${date === undefined ? "" : `?date=${encodeURIComponent(date)}`}`,
    headers: { authorization: who.apiKey ?? who.bearer ?? "" },
  });
}

async function putRates(who: { apiKey?: string; bearer?: string }, payload: unknown) {
  return t.call({
    method: "PUT",
    url: "/api/v1/exchange-rates",
    headers: { authorization: who.apiKey ?? who.bearer ?? "" },
    payload: payload as Record<string, unknown>,
  });
}

/** Every reference rate stored, as text, in a fixed order. */
const referenceRows = () =>
  t.ctx.db.query<{ currency: string; day: string; rate: string }>(
    "select currency, day::text as day, rate::text as rate from exchange_rates where tenant_id = '' order by day, currency",
  );

beforeAll(async () => {
  ecb = createServer((req, res) => {
    const path = req.url ?? "";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const answer = served.get(path) ?? { status: 404, body: "not here" };
    if (answer.chunked) {
      res.writeHead(answer.status, { "content-type": "text/xml" });
      const half = Math.floor(answer.body.length / 2);
      res.write(answer.body.slice(0, half));
      res.end(answer.body.slice(half));
      return;
    }
    res.writeHead(answer.status, { "content-type": "text/xml", "content-length": Buffer.byteLength(answer.body) });
    res.end(answer.body);
  });
  await new Promise<void>((resolve) => ecb.listen(0, "127.0.0.1", resolve));
  ecbBase = `http://127.0.0.1:${(ecb.address() as AddressInfo).port}`;
  t = await startTestApp();
  a = await seedTenancy(t);
  b = await seedTenancy(t);
});
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => ecb?.close(resolve));
});

describe("configuration", () => {
  it("defaults to the ECB's files, turns the job off with an empty FX_RATES_URL, and refuses a bad URL", () => {
    expect(loadConfig({}).fxRates).toEqual({
      url: "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml",
      historyUrl: "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.xml",
    });
    expect(loadConfig({ FX_RATES_URL: "", FX_RATES_HISTORY_URL: " " }).fxRates).toEqual({
      url: undefined,
      historyUrl: undefined,
    });
    for (const name of ["FX_RATES_URL", "FX_RATES_HISTORY_URL"]) {
      expect(() => loadConfig({ [name]: "ftp://rates.example/daily.xml" })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: "not a url" })).toThrow(name);
    }
  });

  it("is off in the tests' apps: no job reaches the ECB", () => {
    expect(t.ctx.config.fxRates.url).toBeUndefined();
    expect(t.ctx.jobs.find("exchange-rates")).toBeUndefined();
  });
});

describe("the reference rates job", () => {
  const job = () => exchangeRatesJob(t.ctx.db, { url: `${ecbBase}/daily.xml`, historyUrl: `${ecbBase}/hist.xml` }, {});
  // Friday 27 November 2026, after the ECB's publication.
  const friday = new Date("2026-11-27T16:00:00Z");

  it("backfills from the history file on its first run, then reads the daily file, then waits for the next day", async () => {
    expect(await referenceRows()).toEqual([]);
    served.set("/hist.xml", { status: 200, body: HISTORY });
    served.set("/daily.xml", { status: 200, body: DAILY, chunked: true });

    const first = await job().run(friday);
    expect(first).toMatchObject({ file: "history", days: 3, rates: 9, stored: 9, latestDay: "2026-11-26" });
    expect(hits.get("/hist.xml")).toBe(1);
    expect(hits.get("/daily.xml")).toBeUndefined();
    expect(await referenceRows()).toContainEqual({ currency: "JPY", day: "2026-11-24", rate: "160.4000000000" });

    const second = await job().run(friday);
    expect(second).toMatchObject({ file: "daily", days: 1, rates: 4, stored: 4, latestDay: "2026-11-27" });
    expect(hits.get("/daily.xml")).toBe(1);
    expect(await referenceRows()).toHaveLength(13);

    // The day's rates are in: nothing is fetched until the next working day's are due (Monday 15:00 UTC).
    expect(await job().run(new Date("2026-11-30T14:59:00Z"))).toMatchObject({ skipped: "up to date" });
    expect(hits.get("/daily.xml")).toBe(1);
    expect(hits.get("/hist.xml")).toBe(1);
  });

  it("serves the reference rates to every tenant, the last published one over the weekend", async () => {
    const sunday = await getRates(a, "2026-11-29");
    expect(sunday.statusCode, sunday.body).toBe(200);
    expect(sunday.json().data).toEqual({
      date: "2026-11-29",
      base: "EUR",
      rates: { CHF: 0.931, EUR: 1, GBP: 0.8312, JPY: 161.55, USD: 1.0412 },
      sources: { CHF: "reference", EUR: "reference", GBP: "reference", JPY: "reference", USD: "reference" },
    });
    const wednesday = await getRates(b, "2026-11-25");
    expect(wednesday.json().data.rates).toEqual({ EUR: 1, GBP: 0.8291, JPY: 160.95, USD: 1.0401 });
  });

  it("leaves the stored rates untouched and the service up when the server fails or answers garbage", async () => {
    const before = await referenceRows();
    // Monday after publication: the job fetches the daily file.
    const monday = new Date("2026-11-30T16:00:00Z");
    const failures: [Served, RegExp][] = [
      [{ status: 500, body: "oops" }, /HTTP 500/],
      [{ status: 200, body: "<html><body>Maintenance</body></html>" }, /not an ECB reference rates file/],
      [{ status: 200, body: DAILY.replace("1.0412", "1,0412") }, /rate of USD on 2026-11-27 is not a positive decimal/],
      [{ status: 200, body: DAILY.replace("</Cube>\n\t</Cube>", "</Cube>") }, /ends inside a Cube/],
      [{ status: 200, body: DAILY.replace('"USD"', '"EUR"') }, /'EUR' on 2026-11-27 is not a currency code/],
      [{ status: 200, body: "" }, /not an ECB reference rates file/],
    ];
    for (const [answer, reason] of failures) {
      served.set("/daily.xml", answer);
      const error = await job()
        .run(monday)
        .then(
          () => null,
          (caught: unknown) => caught as Error,
        );
      expect(error?.message).toMatch(reason);
      // The host is named; the path (which may hold a key) never is.
      expect(error?.message).toContain(new URL(ecbBase).host);
      expect(error?.message).not.toContain("daily.xml");
    }
    // A server that is not there at all.
    const closed = `127.0.0.1:${await freePort()}`;
    const gone = exchangeRatesJob(t.ctx.db, { url: `http://${closed}/daily.xml`, historyUrl: undefined });
    await expect(gone.run(monday)).rejects.toThrow(`${closed}: the request failed (ECONNREFUSED)`);
    // Bigger than its bound, streamed without a length: cut off, nothing stored.
    served.set("/daily.xml", { status: 200, body: DAILY, chunked: true });
    const small = exchangeRatesJob(
      t.ctx.db,
      { url: `${ecbBase}/daily.xml`, historyUrl: undefined },
      { dailyMaxBytes: 200 },
    );
    await expect(small.run(monday)).rejects.toThrow(/over 200 bytes/);

    // As the scheduler runs it: the failure is recorded with the run, and thrown for the log.
    served.set("/daily.xml", { status: 503, body: "" });
    await expect(
      runJob(t.ctx.db, job(), { slot: "2026-11-30T16:40:00.000Z", manual: false, nodeId: "node_test", now: monday }),
    ).rejects.toThrow(/HTTP 503/);
    const [run] = await t.ctx.db.query<{ error: string }>(
      "select error from job_runs where job = 'exchange-rates' and slot = '2026-11-30T16:40:00.000Z'",
    );
    expect(run?.error).toMatch(/^reference rates from 127\.0\.0\.1:\d+: HTTP 503$/);

    expect(await referenceRows()).toEqual(before);
    const health = await t.call({ method: "GET", url: "/api/health" });
    expect(health.statusCode).toBe(200);
    expect((await getRates(a, "2026-11-30")).json().data.rates.USD).toBe(1.0412);
  });

  it("reads the daily file again once the server is back", async () => {
    served.set("/daily.xml", { status: 200, body: ecbFile({ "2026-11-30": { USD: "1.0450" } }) });
    expect(await job().run(new Date("2026-11-30T17:40:00Z"))).toMatchObject({ file: "daily", stored: 1 });
    const rates = (await getRates(a, "2026-11-30")).json().data.rates;
    expect(rates).toMatchObject({ USD: 1.045, JPY: 161.55 });
  });

  it("reads the ECB's quoting either way and refuses what is not its format", () => {
    expect(parseEcbRates(HISTORY).map((r) => `${r.day} ${r.currency} ${r.rate}`)).toEqual([
      "2026-11-24 USD 1.0388",
      "2026-11-24 JPY 160.40",
      "2026-11-24 GBP 0.8288",
      "2026-11-25 USD 1.0401",
      "2026-11-25 JPY 160.95",
      "2026-11-25 GBP 0.8291",
      "2026-11-26 USD 1.0420",
      "2026-11-26 JPY 161.20",
      "2026-11-26 GBP 0.8300",
    ]);
    const refused: [string, RegExp][] = [
      [DAILY.replace("2026-11-27", "2026-02-30"), /'2026-02-30' is not a date/],
      [DAILY.replace('<Cube time="2026-11-27">', ""), /outside a day/],
      [DAILY.replace('rate="0.9310"', 'rate="0"'), /CHF on 2026-11-27 is not a positive decimal/],
      [DAILY.replace('currency="CHF"', 'currency="chf"'), /'chf' on 2026-11-27 is not a currency code/],
      [DAILY.replace('currency="CHF"', 'currency="USD"'), /USD is listed twice on 2026-11-27/],
      [DAILY.replace('rate="0.9310"', 'rate="0.9310" extra="1"'), /attributes currency, rate, extra is not understood/],
      [ecbFile({ "2026-11-27": {}, "2026-11-26": {} }), /holds no rate/],
      [`${ecbFile({ "2026-11-27": { USD: "1" } })}${ecbFile({ "2026-11-27": { USD: "1" } })}`, /listed twice/],
    ];
    for (const [text, reason] of refused) expect(() => parseEcbRates(text)).toThrow(reason);
  });
});

describe("PUT and GET /api/v1/exchange-rates", () => {
  it("stores the tenant's rates of a day (any case) and answers them as GET does", async () => {
    const put = await putRates(a, { date: "2025-03-12", rates: { usd: 1.09, GBP: 0.8421 } });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ code: "ok", message: "Saved" });
    const expected = {
      date: "2025-03-12",
      base: "EUR",
      rates: { EUR: 1, GBP: 0.8421, USD: 1.09 },
      sources: { EUR: "reference", GBP: "tenant", USD: "tenant" },
    };
    expect(put.json().data).toEqual(expected);
    const got = await getRates(a, "2025-03-12");
    expect(got.statusCode, got.body).toBe(200);
    expect(got.json().data).toEqual(expected);
    // The day before any rate: EUR alone.
    expect((await getRates(a, "2025-03-11")).json().data.rates).toEqual({ EUR: 1 });
  });

  it("replaces a rate by a later PUT of the same day and code, keeping the others", async () => {
    const put = await putRates(a, { date: "2025-03-12", rates: { USD: 1.0925 } });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json().data.rates).toEqual({ EUR: 1, GBP: 0.8421, USD: 1.0925 });
    const rows = await t.ctx.db.query<{ rate: string }>(
      "select rate::text as rate from exchange_rates where tenant_id = $1 and currency = 'USD' and day = '2025-03-12'",
      [a.tenantId],
    );
    expect(rows).toEqual([{ rate: "1.0925000000" }]);
    const audit = await t.ctx.db.query<{ action: string; subject_id: string }>(
      "select action, subject_id from audit_log where tenant_id = $1 and action = 'exchange_rates.set'",
      [a.tenantId],
    );
    expect(audit).toEqual([
      { action: "exchange_rates.set", subject_id: "2025-03-12" },
      { action: "exchange_rates.set", subject_id: "2025-03-12" },
    ]);
  });

  it("lets the tenant's rate win over the reference rate of the same day, and the later day win otherwise", async () => {
    const at = t.clock.now();
    await storeRates(
      t.ctx.db,
      "",
      [
        { currency: "USD", day: "2025-03-12", rate: "1.0800" },
        { currency: "JPY", day: "2025-03-12", rate: "161.3" },
        { currency: "USD", day: "2025-03-14", rate: "1.0850" },
      ],
      at,
    );
    const same = (await getRates(a, "2025-03-13")).json().data;
    expect(same.rates).toEqual({ EUR: 1, GBP: 0.8421, JPY: 161.3, USD: 1.0925 });
    expect(same.sources).toEqual({ EUR: "reference", GBP: "tenant", JPY: "reference", USD: "tenant" });
    // Friday's reference rate is later than the tenant's Wednesday one: it is in force over the weekend.
    const weekend = (await getRates(a, "2025-03-16")).json().data;
    expect(weekend.rates.USD).toBe(1.085);
    expect(weekend.sources.USD).toBe("reference");
    // A tenant rate of Friday wins again, on Friday and after.
    await putRates(a, { date: "2025-03-14", rates: { USD: 1.0901 } });
    expect(await ratesInForce(t.ctx.db, a.tenantId, "2025-03-16")).toMatchObject({
      rates: { USD: 1.0901 },
      sources: { USD: "tenant" },
    });
  });

  it("keeps each tenant's rates to itself", async () => {
    const other = (await getRates(b, "2025-03-16")).json().data;
    expect(other.rates).toEqual({ EUR: 1, JPY: 161.3, USD: 1.085 });
    expect(Object.values(other.sources)).toEqual(["reference", "reference", "reference"]);
    const put = await putRates(b, { date: "2025-03-16", rates: { GBP: 0.9 } });
    expect(put.json().data.rates.GBP).toBe(0.9);
    expect((await getRates(a, "2025-03-16")).json().data.rates.GBP).toBe(0.8421);
  });

  it("answers today's rates (UTC) when no date is given", async () => {
    const now = t.clock.now();
    t.clock.set("2025-03-16T23:30:00Z");
    try {
      const res = await getRates(a);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ date: "2025-03-16", rates: { USD: 1.0901 } });
    } finally {
      t.clock.set(now);
    }
  });

  // ICU knows about 160 codes: 201 distinct three-letter keys, refused by their count first.
  const manyCodes = Object.fromEntries(
    Array.from({ length: 201 }, (_, i) => [
      `A${String.fromCharCode(65 + Math.floor(i / 26))}${String.fromCharCode(65 + (i % 26))}`,
      1,
    ]),
  );
  it.each([
    ["a date that does not exist", { date: "2025-02-29", rates: { USD: 1 } }, "date"],
    ["a date in another format", { date: "12/03/2025", rates: { USD: 1 } }, "date"],
    ["no date", { rates: { USD: 1 } }, "date"],
    ["EUR, always 1", { date: "2025-03-12", rates: { EUR: 1 } }, "rates.EUR"],
    ["an unknown code", { date: "2025-03-12", rates: { XYZ: 1 } }, "rates.XYZ"],
    ["a code that is not three letters", { date: "2025-03-12", rates: { US: 1 } }, "rates.US"],
    ["a zero rate", { date: "2025-03-12", rates: { USD: 0 } }, "rates.USD"],
    ["a negative rate", { date: "2025-03-12", rates: { GBP: -0.8 } }, "rates.GBP"],
    ["a rate that is not a number", { date: "2025-03-12", rates: { USD: "lots" } }, "rates.USD"],
    ["a rate stored as 0", { date: "2025-03-12", rates: { USD: 1e-12 } }, "rates.USD"],
    ["a rate beyond any currency", { date: "2025-03-12", rates: { USD: 1e13 } }, "rates.USD"],
    ["one code twice", { date: "2025-03-12", rates: { USD: 1, usd: 2 } }, "rates.usd"],
    ["no rates", { date: "2025-03-12", rates: {} }, "rates"],
    ["more than 200 codes", { date: "2025-03-12", rates: manyCodes }, "rates"],
    ["another property", { date: "2025-03-12", rates: { USD: 1 }, base: "USD" }, "base"],
  ])("refuses %s with a 400 naming %s", async (_what, body, field) => {
    const before = await t.ctx.db.query("select 1 from exchange_rates where tenant_id = $1", [a.tenantId]);
    const res = await putRates(a, body);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe("validation_error");
    expect(res.json().data.errors[0].path).toBe(field);
    expect(res.json().message.startsWith(`${field} `)).toBe(true);
    expect(await t.ctx.db.query("select 1 from exchange_rates where tenant_id = $1", [a.tenantId])).toHaveLength(
      before.length,
    );
  });

  it.each([
    ["2025-13-01", "date"],
    ["yesterday", "date"],
  ])("refuses GET ?date=%s with a 400 naming %s", async (date, field) => {
    const res = await getRates(a, date);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().data.errors[0].path).toBe(field);
  });

  it("needs account.admin to PUT and reports.read to GET", async () => {
    const reader = await signInPerson(t, a.tenantId, { name: "Reader", permissions: ["reports.read"] });
    const refused = await putRates(reader, { date: "2025-03-12", rates: { USD: 2 } });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json().message).toContain("account.admin");
    expect((await getRates(reader, "2025-03-12")).json().data.rates.USD).toBe(1.0925);

    const stranger = await signInPerson(t, a.tenantId, { name: "Catalog only", permissions: ["catalog.read"] });
    const hidden = await getRates(stranger, "2025-03-12");
    expect(hidden.statusCode, hidden.body).toBe(403);
    expect(hidden.json().message).toContain("reports.read");
    expect((await getRates({ apiKey: "" }, "2025-03-12")).statusCode).toBe(401);
  });
});

describe("the demo tenant's rates", () => {
  it("are seeded with the demo tenant: USD, GBP and JPY per EUR on every working day, the same for the same day", async () => {
    const demo = await seedDemo(t.ctx);
    if (!demo) throw new Error("the demo tenant was already there");
    const today = t.clock.now().toISOString().slice(0, 10);
    const res = await getRates({ apiKey: `ApiKey ${demo.apiKey}` }, today);
    expect(res.statusCode, res.body).toBe(200);
    const { rates, sources } = res.json().data;
    expect(Object.keys(rates)).toEqual(expect.arrayContaining(["EUR", "GBP", "JPY", "USD"]));
    expect(sources).toMatchObject({ GBP: "tenant", JPY: "tenant", USD: "tenant" });
    expect(rates.USD).toBeGreaterThan(1);
    expect(rates.USD).toBeLessThan(1.2);
    expect(rates.GBP).toBeGreaterThan(0.8);
    expect(rates.GBP).toBeLessThan(0.9);
    expect(rates.JPY).toBeGreaterThan(140);
    expect(rates.JPY).toBeLessThan(180);
    const [span] = await t.ctx.db.query<{ days: number; weekend: number }>(
      `select count(distinct day)::int as days, count(*) filter (where extract(isodow from day) > 5)::int as weekend
         from exchange_rates where tenant_id = $1`,
      [demo.tenantId],
    );
    expect(span?.weekend).toBe(0);
    expect(span?.days).toBeGreaterThan(280);
    // Deterministic: seeding again changes nothing.
    expect(await seedDemoRates(t.ctx.db, demo.tenantId, t.clock.now())).toBe(0);
    // Another tenant never sees them.
    expect((await getRates(b, today)).json().data.sources.JPY).not.toBe("tenant");
  });
});
