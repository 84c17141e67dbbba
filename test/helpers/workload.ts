import { expect } from "vitest";
import { CONVERSION_TYPES, type ConversionType } from "../../src/features/tracking/index.js";
import { seededRandom } from "../../src/platform/seeded-random.js";
import type { Tenancy, TestApp } from "./app.js";
import { createVia } from "./catalog.js";

// What a caller records: a Click is made by the redirect and refused by the API (issue 22).
const RECORDED_TYPES = CONVERSION_TYPES.filter((type) => type !== "Click");

/** Deterministic randomness: the same workload on every run and database. */
export function prng(seed: number) {
  const next = seededRandom(seed);
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    chance: (p: number) => next() < p,
    pick: <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T,
    /** Picks by weight: `weights[i]` for `values[i]`. */
    weighted: <T>(values: readonly T[], weights: readonly number[]): T => {
      const total = weights.reduce((s, w) => s + w, 0);
      let r = next() * total;
      for (let i = 0; i < values.length; i++) {
        r -= weights[i] as number;
        if (r < 0) return values[i] as T;
      }
      return values[values.length - 1] as T;
    },
  };
}

export const BROWSERS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/126.0 Safari/537.36",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) Version/17.5 Safari/605.1.15",
  "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) Mobile/15E148",
];
export const BOTS = [
  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
];
const IPS = ["203.0.113.1", "203.0.113.2", "203.0.113.3", "2001:db8::7", "198.51.100.9", "198.51.100.10"];
const COMMISSIONS = new Set<ConversionType>(["CpaCommission", "RevShareCommission", "FlatFeeCommission"]);

export interface Named {
  id: number;
  name: string;
}
export interface WorkloadCatalog {
  brands: Named[];
  programs: (Named & { brandIds: number[] })[];
  accounts: (Named & { programId: number; status: "active" | "inactive" })[];
  links: (Named & { accountId: number; brandId: number; programId: number })[];
  sources: Named[];
  trackers: Named[];
}

/**
 * A catalog with three brands, three programs, eight accounts (two inactive, two without any
 * traffic) and ten links (two without traffic). Names are plain letters, so any collation sorts
 * them like `toLowerCase()` does.
 */
export async function buildCatalog(t: TestApp, who: Tenancy): Promise<WorkloadCatalog> {
  const brands: Named[] = [];
  for (const name of ["Acme", "Bolt", "Crest"]) brands.push({ id: await createVia(t, who, "brands", { name }), name });
  const [b0, b1, b2] = brands.map((b) => b.id) as [number, number, number];
  const programs: WorkloadCatalog["programs"] = [];
  for (const [name, brandIds] of [
    ["Prime", [b0, b1]],
    ["Quest", [b1, b2]],
    ["Rally", [b2]],
  ] as const) {
    programs.push({ id: await createVia(t, who, "programs", { name, brandIds }), name, brandIds: [...brandIds] });
  }
  const [p0, p1, p2] = programs.map((p) => p.id) as [number, number, number];
  const accounts: WorkloadCatalog["accounts"] = [];
  for (const [name, programId, status] of [
    ["Alpha", p0, "active"],
    ["bravo", p0, "active"],
    ["Charlie", p1, "active"],
    ["delta", p1, "inactive"],
    ["Echo", p2, "active"],
    ["foxtrot", p2, "active"],
    ["Golf", p0, "inactive"],
    ["hotel", p1, "active"],
  ] as const) {
    const id = await createVia(t, who, "accounts", { name, programId, status, username: name.toLowerCase() });
    accounts.push({ id, name, programId, status });
  }
  const account = (name: string) => accounts.find((a) => a.name === name) as WorkloadCatalog["accounts"][number];
  const links: WorkloadCatalog["links"] = [];
  for (const [name, accountName, brandId] of [
    ["amber", "Alpha", b0],
    ["Blue", "Alpha", b1],
    ["cyan", "bravo", b0],
    ["Denim", "Charlie", b1],
    ["ebony", "Charlie", b2],
    ["Fern", "delta", b2],
    ["gold", "Echo", b2],
    ["ivory", "Golf", b1],
    ["Hazel", "foxtrot", b2],
    ["Jade", "hotel", b2],
  ] as const) {
    const a = account(accountName);
    const id = await createVia(t, who, "links", {
      name,
      accountId: a.id,
      brandId,
      url: `https://${name.toLowerCase()}.example/landing?cid={clickId}`,
    });
    links.push({ id, name, accountId: a.id, brandId, programId: a.programId });
  }
  const sources: Named[] = [];
  for (const name of ["Search", "Social", "Email"]) {
    sources.push({ id: await createVia(t, who, "traffic-sources", { name }), name });
  }
  const trackers: Named[] = [];
  for (const name of ["Spring Promo", "Summer"]) {
    trackers.push({ id: await createVia(t, who, "trackers", { name }), name });
  }
  return { brands, programs, accounts, links, sources, trackers };
}

/** The rollup dimensions of one event; 0 and '' stand for "none". */
export interface Dims {
  accountId: number;
  linkId: number;
  brandId: number;
  programId: number;
  sourceId: number;
  trackerId: number;
  country: string;
}

/** One counted click or one recorded (non-duplicate) conversion, as the test sent it. */
export interface ModelEvent {
  day: string;
  dims: Dims;
  click?: { unique: boolean };
  /** A bot's click: stored flagged, counted in botClicks only, without its tracker. */
  bot?: true;
  conversion?: { type: ConversionType; cents: number };
}

export interface Workload {
  catalog: WorkloadCatalog;
  events: ModelEvent[];
  /** Requests to /go that must not count as clicks (bots, HEAD). */
  notCounted: number;
  duplicates: number;
}

const NO_DIMS: Dims = { accountId: 0, linkId: 0, brandId: 0, programId: 0, sourceId: 0, trackerId: 0, country: "" };

const centsText = (value: number): string => {
  const abs = Math.abs(value);
  return `${value < 0 ? "-" : ""}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
};

/**
 * The tenant's own exchange rates the workload's amounts are converted at (units per 1 EUR, in
 * force from before its first day): EUR and GBP amounts reach the reports in USD, the tenant's
 * default currency, at factors that keep every amount exact in cents.
 */
const WORKLOAD_RATES = { USD: 1, GBP: 0.5 };
const USD_PER: Record<string, number> = { EUR: 1 / 1, USD: 1, GBP: 1 / 0.5 };

interface SentClick {
  id: string;
  at: Date;
  dims: Dims;
}

/**
 * Drives a random workload through the public surfaces: clicks through GET /go (several links,
 * sources, trackers, countries, visitors, bots and HEADs) and conversions of every type through
 * POST /api/v1/conversions (single and batched, attributed or not, some duplicates, various
 * occurredAt). A first phase of clicks lies 5 weeks before the main one. Returns what was sent.
 */
export async function runWorkload(
  t: TestApp,
  who: Tenancy,
  catalog: WorkloadCatalog,
  options: { seed: number; start: string; clicks: number; earlyClicks: number },
): Promise<Workload> {
  const rates = await t.call({
    method: "PUT",
    url: "/api/v1/exchange-rates",
    headers: { authorization: who.apiKey },
    payload: { date: "2000-01-03", rates: WORKLOAD_RATES },
  });
  expect(rates.statusCode, rates.body).toBe(200);
  const rnd = prng(options.seed);
  const events: ModelEvent[] = [];
  const clicks: SentClick[] = [];
  const visitors = new Set<string>();
  let notCounted = 0;
  let duplicates = 0;
  const externalIds: string[] = [];
  const seenExternal = new Set<string>();
  let batch: { item: Record<string, string | number>; event: ModelEvent; duplicate: boolean }[] = [];

  const [tSpring, tSummer] = catalog.trackers as [Named, Named];
  const trackerValues: { value: string | null; resolves: number }[] = [
    { value: null, resolves: 0 },
    { value: null, resolves: 0 },
    { value: String(tSpring.id), resolves: tSpring.id },
    { value: "summer", resolves: tSummer.id },
    { value: "SPRING promo", resolves: tSpring.id },
    { value: "999999999", resolves: 0 },
  ];
  const countries: [string | null, string][] = [
    [null, ""],
    ["DE", "DE"],
    ["fr", "FR"],
    ["US", "US"],
    ["US", "US"],
    ["XX", ""],
  ];
  // Hazel and Jade never get traffic; the others with different weights so totals differ.
  const trafficLinks = catalog.links.filter((l) => l.name !== "Hazel" && l.name !== "Jade");
  const linkWeights = [6, 3, 5, 2, 4, 1, 2.5, 1.5];

  async function sendBatch(): Promise<void> {
    if (batch.length === 0) return;
    const sent = batch;
    batch = [];
    const res = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { items: sent.map((b) => b.item) },
    });
    expect([200, 201], res.body).toContain(res.statusCode);
    const items = res.json().data.items as { duplicate: boolean }[];
    expect(items.map((i) => i.duplicate)).toEqual(sent.map((b) => b.duplicate));
    for (const b of sent) {
      if (b.duplicate) duplicates += 1;
      else events.push(b.event);
    }
  }

  async function convert(occurredAt?: Date): Promise<void> {
    const now = t.clock.now();
    const type = rnd.pick(RECORDED_TYPES);
    let cents = rnd.chance(0.15) ? 0 : rnd.int(1, 99_999);
    if (COMMISSIONS.has(type) && rnd.chance(0.25)) cents = -cents;
    const fields: Record<string, string | number> = { type, value: rnd.chance(0.5) ? cents / 100 : centsText(cents) };
    const currency = cents !== 0 ? rnd.pick(["EUR", "usd", "GBP"]) : "USD";
    if (cents !== 0) fields.currency = currency;
    let click: SentClick | null = null;
    if (occurredAt === undefined) {
      const attribution = rnd.next();
      if (attribution < 0.75 && clicks.length > 0) {
        // Mostly recent clicks, sometimes an old one.
        click = rnd.chance(0.8) ? rnd.pick(clicks.slice(-40)) : rnd.pick(clicks);
        fields.clickId = click.id;
      } else if (attribution < 0.85) {
        fields.clickId = `clk_unknown${rnd.int(1, 1_000_000)}`;
      }
      const earliest = click ? click.at.getTime() : now.getTime() - 36 * 3_600_000;
      occurredAt = rnd.chance(0.3) ? now : new Date(rnd.int(earliest, now.getTime()));
    }
    if (occurredAt.getTime() !== now.getTime()) fields.occurredAt = occurredAt.toISOString();
    let duplicate = false;
    const choice = rnd.next();
    if (choice < 0.06 && externalIds.length > 0) {
      fields.externalId = rnd.pick(externalIds);
    } else if (choice < 0.7) {
      const id = `ext-${options.seed}-${externalIds.length + 1}`;
      externalIds.push(id);
      fields.externalId = id;
    }
    if (fields.externalId !== undefined) {
      duplicate = seenExternal.has(String(fields.externalId));
      seenExternal.add(String(fields.externalId));
    }
    const event: ModelEvent = {
      day: occurredAt.toISOString().slice(0, 10),
      dims: click ? click.dims : NO_DIMS,
      // In the tenant's reporting currency (USD), at WORKLOAD_RATES: exact in cents.
      conversion: { type, cents: cents * (USD_PER[currency.toUpperCase()] ?? 1) },
    };
    if (rnd.chance(0.5)) {
      // Sent later, when the clock has moved on: the time must travel with the item.
      fields.occurredAt = occurredAt.toISOString();
      batch.push({ item: fields, event, duplicate });
      if (batch.length >= 6) await sendBatch();
      return;
    }
    // A waiting batch holds earlier conversions: send it first, in order.
    await sendBatch();
    const res = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: fields,
    });
    expect(res.statusCode, res.body).toBe(duplicate ? 200 : 201);
    expect(res.json().data.duplicate).toBe(duplicate);
    if (!duplicate) expect(res.json().data.attributed).toBe(click !== null);
    if (duplicate) duplicates += 1;
    else events.push(event);
  }

  async function clickOnce(i: number): Promise<void> {
    const link = rnd.weighted(trafficLinks, linkWeights);
    const source = rnd.weighted(catalog.sources, [5, 3, 1]);
    const tracker = rnd.pick(trackerValues);
    const [countryHeader, country] = rnd.pick(countries);
    const ip = rnd.pick(IPS);
    const bot = rnd.chance(0.06);
    const head = !bot && rnd.chance(0.04);
    const userAgent = bot ? rnd.pick(BOTS) : rnd.pick(BROWSERS);
    const headers: Record<string, string> = { "user-agent": userAgent };
    if (countryHeader !== null) headers["cf-ipcountry"] = countryHeader;
    const query = new URLSearchParams();
    if (tracker.value !== null) query.set("tracker", tracker.value);
    if (rnd.chance(0.2)) query.set("gclid", `g-${i}`);
    const at = t.clock.now();
    const res = await t.call({
      method: head ? "HEAD" : "GET",
      url: `/go/${link.id}/${source.id}${query.size > 0 ? `?${query.toString()}` : ""}`,
      headers,
      remoteAddress: ip,
    });
    expect(res.statusCode).toBe(302);
    const id = new URL(String(res.headers.location)).searchParams.get("cid") as string;
    expect(id).toMatch(/^clk_/);
    const day = at.toISOString().slice(0, 10);
    if (bot) {
      // Stored flagged and counted apart: no tracker, no visitor.
      events.push({
        day,
        dims: {
          accountId: link.accountId,
          linkId: link.id,
          brandId: link.brandId,
          programId: link.programId,
          sourceId: source.id,
          trackerId: 0,
          country,
        },
        bot: true,
      });
    }
    if (bot || head) {
      notCounted += 1;
      return;
    }
    const dims: Dims = {
      accountId: link.accountId,
      linkId: link.id,
      brandId: link.brandId,
      programId: link.programId,
      sourceId: source.id,
      trackerId: tracker.resolves,
      country,
    };
    const visitor = `${day}|${link.id}|${source.id}|${ip}\n${userAgent}`;
    const unique = !visitors.has(visitor);
    visitors.add(visitor);
    clicks.push({ id, at, dims });
    events.push({ day, dims, click: { unique } });
  }

  // Phase 1: a little traffic five weeks before the rest.
  t.clock.set(new Date(new Date(options.start).getTime() - 35 * 86_400_000));
  for (let i = 0; i < options.earlyClicks; i++) {
    t.clock.advance(rnd.int(0, 60 * 60_000));
    await clickOnce(i);
    if (rnd.chance(0.3)) await convert();
  }
  await sendBatch();
  // Phase 2: the main traffic over about a week, crossing a month end.
  t.clock.set(options.start);
  for (let i = 0; i < options.clicks; i++) {
    t.clock.advance(rnd.int(0, 45 * 60_000));
    await clickOnce(options.earlyClicks + i);
    if (rnd.chance(0.1)) await t.ctx.tracking.clicks.flush();
    if (rnd.chance(0.3)) await convert();
  }
  await sendBatch();
  // Late-reported conversions 40 days back (outside a default 30-day window).
  for (let i = 0; i < 3; i++) await convert(new Date(t.clock.now().getTime() - (40 + i) * 86_400_000));
  await sendBatch();
  await t.ctx.tracking.clicks.flush();

  // The workload is what the tests mean it to be.
  const conversions = events.filter((e) => e.conversion);
  expect(new Set(events.filter((e) => e.click).map((e) => e.day)).size).toBeGreaterThanOrEqual(7);
  expect(new Set(conversions.map((e) => e.conversion?.type)).size).toBe(RECORDED_TYPES.length);
  expect(conversions.some((e) => (e.conversion?.cents ?? 0) < 0)).toBe(true);
  expect(conversions.some((e) => e.dims.linkId === 0)).toBe(true);
  expect(conversions.some((e) => e.click === undefined && e.dims.linkId !== 0)).toBe(true);
  expect(notCounted).toBeGreaterThan(5);
  expect(duplicates).toBeGreaterThan(0);
  return { catalog, events, notCounted, duplicates };
}

// ---------------------------------------------------------------------------------------------
// Expected figures, computed from the model alone.

/** Sums of one group; amounts in cents, exact. */
interface Measures {
  clicks: number;
  unique: number;
  bots: number;
  signups: number;
  ftd: number;
  qualifiers: number;
  deposits: number;
  depositCents: number;
  cpaCents: number;
  revCents: number;
  flatCents: number;
}
const zero = (): Measures => ({
  clicks: 0,
  unique: 0,
  bots: 0,
  signups: 0,
  ftd: 0,
  qualifiers: 0,
  deposits: 0,
  depositCents: 0,
  cpaCents: 0,
  revCents: 0,
  flatCents: 0,
});

function addEvent(m: Measures, e: ModelEvent): void {
  if (e.bot) m.bots += 1;
  if (e.click) {
    m.clicks += 1;
    if (e.click.unique) m.unique += 1;
  }
  const c = e.conversion;
  if (!c) return;
  if (c.type === "Signup") m.signups += 1;
  if (c.type === "FirstTimeDeposit") m.ftd += 1;
  if (c.type === "Qualifier") m.qualifiers += 1;
  if (c.type === "Deposit") {
    m.deposits += 1;
    m.depositCents += c.cents;
  }
  if (c.type === "CpaCommission") m.cpaCents += c.cents;
  if (c.type === "RevShareCommission") m.revCents += c.cents;
  if (c.type === "FlatFeeCommission") m.flatCents += c.cents;
}

function addMeasures(into: Measures, m: Measures): void {
  for (const k of Object.keys(into) as (keyof Measures)[]) into[k] += m[k];
}

/** num/den rounded to `places` decimals, half away from zero, exactly (integers in). */
function roundedRatio(num: number, den: number, scale: number): number {
  if (den === 0) return 0;
  const n = Math.abs(num) * scale;
  const r = Math.floor((2 * n + den) / (2 * den));
  const value = (num < 0 ? -r : r) / scale;
  return value === 0 ? 0 : value;
}

const money = (c: number): number => (c === 0 ? 0 : c / 100);

export const STAT_NAMES = [
  "clicks",
  "uniqueClicks",
  "botClicks",
  "signups",
  "firstTimeDeposit",
  "qualifiers",
  "deposits",
  "depositAmount",
  "cpaCommission",
  "revShareCommission",
  "flatFeeCommission",
  "commission",
  "conversionRate",
  "epc",
] as const;
export type StatName = (typeof STAT_NAMES)[number];

/** Every stat of a group, derived ones from the summed parts. */
export function statsOf(m: Measures): Record<StatName, number> {
  const commissionCents = m.cpaCents + m.revCents + m.flatCents;
  return {
    clicks: m.clicks,
    uniqueClicks: m.unique,
    botClicks: m.bots,
    signups: m.signups,
    firstTimeDeposit: m.ftd,
    qualifiers: m.qualifiers,
    deposits: m.deposits,
    depositAmount: money(m.depositCents),
    cpaCommission: money(m.cpaCents),
    revShareCommission: money(m.revCents),
    flatFeeCommission: money(m.flatCents),
    commission: money(commissionCents),
    // signups / clicks at 4 places; commission (cents/100) / clicks at 4 places.
    conversionRate: roundedRatio(m.signups, m.clicks, 10_000),
    epc: roundedRatio(commissionCents, m.clicks * 100, 10_000),
  };
}

export const ZERO_STATS = statsOf(zero());

export interface Selection {
  from: string;
  to: string;
  brandId?: number;
  programId?: number;
  accountId?: number;
  trafficSourceId?: number;
  linkId?: number;
  trackerId?: number;
}

const FILTER_DIM: Record<string, keyof Dims> = {
  brandId: "brandId",
  programId: "programId",
  accountId: "accountId",
  trafficSourceId: "sourceId",
  linkId: "linkId",
  trackerId: "trackerId",
};

function selected(w: Workload, sel: Selection): ModelEvent[] {
  return w.events.filter((e) => {
    if (e.day < sel.from || e.day > sel.to) return false;
    for (const [param, dim] of Object.entries(FILTER_DIM)) {
      const wanted = sel[param as keyof Selection];
      if (wanted !== undefined && e.dims[dim] !== wanted) return false;
    }
    return true;
  });
}

/** The Monday of a day's ISO week. */
export function mondayOf(day: string): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  return new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * 86_400_000).toISOString().slice(0, 10);
}

export const ENTITY_FIELDS = ["brand", "program", "account", "link", "trafficSource", "tracker"] as const;

/**
 * The performance report's rows as the model says they should be: one per group of the fields
 * (with `<field>Id` for entities), all stats. A group exists when an event of it lies in the
 * window; with conversionType, events are split by type (clicks on the null type) and a daily
 * part that carries nothing for its type (a commission of 0, a Click conversion) is left out.
 */
export function expectedPerformance(w: Workload, fields: readonly string[], sel: Selection): Record<string, unknown>[] {
  const c = w.catalog;
  const nameOf = (list: Named[], id: number) => (id === 0 ? null : (list.find((x) => x.id === id)?.name ?? "?"));
  const entity: Record<(typeof ENTITY_FIELDS)[number], [Named[], keyof Dims]> = {
    brand: [c.brands, "brandId"],
    program: [c.programs, "programId"],
    account: [c.accounts, "accountId"],
    link: [c.links, "linkId"],
    trafficSource: [c.sources, "sourceId"],
    tracker: [c.trackers, "trackerId"],
  };
  // Daily parts keyed like the rollup rows, each split by conversion type when asked.
  const parts = new Map<string, { day: string; dims: Dims; type: string | null; m: Measures }>();
  const byType = fields.includes("conversionType");
  for (const e of selected(w, sel)) {
    const type = byType ? (e.conversion ? e.conversion.type : null) : null;
    const key = [e.day, ...Object.values(e.dims), type].join("|");
    let part = parts.get(key);
    if (!part) {
      part = { day: e.day, dims: e.dims, type, m: zero() };
      parts.set(key, part);
    }
    addEvent(part.m, e);
  }
  const rows = new Map<string, { row: Record<string, unknown>; m: Measures }>();
  for (const part of parts.values()) {
    if (byType && Object.values(part.m).every((v) => v === 0)) continue;
    const row: Record<string, unknown> = {};
    for (const field of fields) {
      if (field === "date") row.date = part.day;
      else if (field === "week") row.week = mondayOf(part.day);
      else if (field === "month") row.month = part.day.slice(0, 7);
      else if (field === "country") row.country = part.dims.country === "" ? null : part.dims.country;
      else if (field === "conversionType") row.conversionType = part.type;
      else {
        const [list, dim] = entity[field as (typeof ENTITY_FIELDS)[number]];
        const id = part.dims[dim] as number;
        row[field] = nameOf(list, id);
        row[`${field}Id`] = id === 0 ? null : id;
      }
    }
    const key = JSON.stringify(row);
    let group = rows.get(key);
    if (!group) {
      group = { row, m: zero() };
      rows.set(key, group);
    }
    addMeasures(group.m, part.m);
  }
  if (fields.length === 0 && rows.size === 0) rows.set("{}", { row: {}, m: zero() });
  return [...rows.values()].map(({ row, m }) => ({ ...row, ...statsOf(m) }));
}

/** Metrics per account (or link) id over a window, every stat; ids without events are absent. */
export function expectedMetrics(
  w: Workload,
  by: "accountId" | "linkId",
  from: string,
  to: string,
): Map<number, Record<StatName, number>> {
  const sums = new Map<number, Measures>();
  for (const e of selected(w, { from, to })) {
    const id = e.dims[by];
    if (id === 0) continue;
    let m = sums.get(id);
    if (!m) {
      m = zero();
      sums.set(id, m);
    }
    addEvent(m, e);
  }
  return new Map([...sums].map(([id, m]) => [id, statsOf(m)]));
}

/** The days the model's events fall on, sorted. */
export function daysOf(w: Workload, kind?: "click" | "conversion"): string[] {
  return [
    ...new Set(w.events.filter((e) => (kind === undefined ? true : e[kind] !== undefined)).map((e) => e.day)),
  ].sort();
}

/** A stable order for comparing report rows: by the JSON of their field values. */
export function canonical<T extends Record<string, unknown>>(rows: T[], fields: readonly string[]): T[] {
  const key = (r: T) => JSON.stringify(fields.flatMap((f) => [r[f], r[`${f}Id`]]));
  return [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
