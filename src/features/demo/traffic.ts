import type { Db, Queryable } from "../../platform/db/index.js";
import { newId } from "../../platform/ids.js";
import { seededRandom } from "../../platform/seeded-random.js";
import { createItem, RESOURCE_BY_TABLE } from "../catalog/index.js";
import { agentFacts } from "../click-facts/index.js";
import { type Click, type ConversionInput, readConversion, recordConversions, writeClicks } from "../tracking/index.js";

export interface TrafficOptions {
  days: number;
  clicks: number;
  /** The traffic ends here; it starts `days` days before. */
  now: Date;
  /** Same seed, same traffic. */
  seed?: number;
  /** Clicks per transaction. */
  batchSize?: number;
  /**
   * At least this many accounts: when the tenant has fewer, more are created (spread over its
   * programs, each with a link per brand its program offers). Default: the demo catalog's six.
   */
  accounts?: number;
  /**
   * Conversions per click on average (signups, deposits, commissions... together), by scaling
   * the share of clicks that sign up. Default about 0.23 (8% of clicks sign up).
   */
  conversionsPerClick?: number;
  /**
   * Batches written at once, each in its own transaction (PostgreSQL; PGlite has one connection
   * and runs them one after the other). Default 1. A batch whose transaction deadlocks is retried.
   */
  concurrency?: number;
  /** The currencies of the conversions, one per brand in turn. Default: euros, pounds and dollars (the demo: DEMO_CURRENCIES). */
  currencies?: readonly string[];
  onProgress?: (progress: { clicks: number; conversions: number }) => void;
}

export interface TrafficSummary {
  clicks: number;
  conversions: number;
  links: number;
  trafficSources: number;
}

const BRANDS = ["Lucky Star Casino", "Goal Rush Sports", "Velvet Poker", "Nova Bingo"];
const PROGRAMS = ["Star Partners", "Rush Affiliates", "Velvet Network"];
const SOURCES = ["Google Ads", "Meta Ads", "Microsoft Ads", "Outbrain", "SEO blog"];
const TRACKERS = ["spring-promo", "newsletter", "homepage-banner", "review-page", "top-list", "retargeting"];
const COUNTRIES = ["GB", "DE", "CA", "SE", "NO", "FI", "IE", "NZ", "", ""];
const NO_HINTS = { brands: null, mobile: null, platform: null };

const AGENTS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15",
  "Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Mobile Safari/537.36",
];

interface Catalog {
  links: { linkId: number; accountId: number; brandId: number; programId: number }[];
  sources: number[];
}

async function existingCatalog(db: Queryable, tenantId: string): Promise<Catalog> {
  const links = await db.query<{ id: string; account_id: string; brand_id: string; program_id: string }>(
    `select l.id, l.account_id, l.brand_id, a.program_id from links l join accounts a on a.id = l.account_id
      where l.tenant_id = $1 order by l.id`,
    [tenantId],
  );
  const sources = await db.query<{ id: string }>("select id from traffic_sources where tenant_id = $1 order by id", [
    tenantId,
  ]);
  return {
    links: links.map((l) => ({
      linkId: Number(l.id),
      accountId: Number(l.account_id),
      brandId: Number(l.brand_id),
      programId: Number(l.program_id),
    })),
    sources: sources.map((s) => Number(s.id)),
  };
}

/** A catalog of brands, programs, accounts, links, sources and trackers, made by the catalog service. */
async function createCatalog(db: Db, tenantId: string, at: Date): Promise<void> {
  const change = { tenantId, actor: { type: "system", name: "seed" } as const, at };
  await db.transaction(async (tx) => {
    const create = (table: keyof typeof RESOURCE_BY_TABLE, input: Record<string, unknown>) =>
      createItem(tx, RESOURCE_BY_TABLE[table], input, change).then((item) => item.id);
    const brands: number[] = [];
    for (const name of BRANDS) brands.push(await create("brands", { name }));
    for (const [p, name] of PROGRAMS.entries()) {
      const offered = brands.filter((_, b) => b % PROGRAMS.length === p || b === PROGRAMS.length);
      const programId = await create("programs", { name, brandIds: offered });
      for (const suffix of ["main", "backup"]) {
        const accountId = await create("accounts", {
          name: `${name} ${suffix}`,
          programId,
          username: `aff-${p + 1}-${suffix}`,
          status: suffix === "main" ? "active" : "inactive",
        });
        for (const brandId of offered) {
          const slug = BRANDS[brands.indexOf(brandId)]?.toLowerCase().replace(/\W+/g, "-") ?? "brand";
          await create("links", {
            accountId,
            brandId,
            name: `${slug} ${suffix}`,
            url: `https://${slug}.example/welcome?btag={clickId}&acc=${accountId}`,
          });
        }
      }
    }
    for (const name of SOURCES) await create("traffic_sources", { name, url: null });
    for (const name of TRACKERS) await create("trackers", { name });
  });
}

/** A catalog grown to `accounts` accounts: new ones go round the programs, with a link per offered brand. */
async function addAccounts(db: Db, tenantId: string, accounts: number, at: Date): Promise<void> {
  const [existing] = await db.query<{ n: number }>("select count(*)::int as n from accounts where tenant_id = $1", [
    tenantId,
  ]);
  const programs = await db.query<{ id: string; brand_ids: (string | number)[] }>(
    "select id, brand_ids from programs where tenant_id = $1 order by id",
    [tenantId],
  );
  const brands = await db.query<{ id: string; name: string }>(
    "select id, name from brands where tenant_id = $1 order by id",
    [tenantId],
  );
  const brandName = new Map(brands.map((b) => [Number(b.id), b.name]));
  const change = { tenantId, actor: { type: "system", name: "seed" } as const, at };
  // Some hundreds of accounts per transaction: a failure loses little, and no transaction grows huge.
  const perTransaction = 250;
  for (let next = (existing?.n ?? 0) + 1; next <= accounts; next += perTransaction) {
    const last = Math.min(accounts, next + perTransaction - 1);
    await db.transaction(async (tx) => {
      const create = (table: keyof typeof RESOURCE_BY_TABLE, input: Record<string, unknown>) =>
        createItem(tx, RESOURCE_BY_TABLE[table], input, change).then((item) => item.id);
      for (let n = next; n <= last; n++) {
        const program = programs[n % programs.length];
        if (program === undefined) throw new Error("the tenant has no program to add accounts to");
        const accountId = await create("accounts", {
          name: `Affiliate ${n}`,
          programId: Number(program.id),
          username: `aff-${n}`,
          status: n % 10 === 0 ? "inactive" : "active",
        });
        for (const brandId of program.brand_ids.map(Number)) {
          const slug = brandName.get(brandId)?.toLowerCase().replace(/\W+/g, "-") ?? "brand";
          await create("links", {
            accountId,
            brandId,
            name: `${slug} ${n}`,
            url: `https://${slug}.example/welcome?btag={clickId}&acc=${accountId}`,
          });
        }
      }
    });
  }
}

/** Conversions per signing-up click on average, as conversionsOf draws them. */
const CONVERSIONS_PER_SIGNUP = 1 + 0.35 * (2 + 0.5 + 1.5 * 2);

/**
 * The currency of a brand's conversions by default: euros, pounds or dollars, so reports
 * convert (at the tenant's rates, or the reference rates).
 */
const BRAND_CURRENCIES = ["EUR", "GBP", "USD"] as const;

/**
 * The demo tenant's currencies: one more, Swedish kronor, which the demo's own rates
 * (./rates.ts) cover as they cover the others: the demo's reports convert four currencies.
 */
export const DEMO_CURRENCIES = [...BRAND_CURRENCIES, "SEK"] as const;

/** The conversions a click leads to: most none, some a signup, fewer a first deposit, and so on. */
function conversionsOf(
  rand: () => number,
  click: Click,
  now: Date,
  signupRate: number,
  currencies: readonly string[],
): ConversionInput[] {
  const out: ConversionInput[] = [];
  if (rand() > signupRate) return out;
  // A conversion due after `now` has not happened yet and is left out: clamped to `now`, every
  // late deposit and commission of the last days piled up at the seeding minute (188 deposits
  // in one minute against about 45 a day).
  const later = (minutes: number) => new Date(click.at.getTime() + minutes * 60_000).toISOString();
  const base = { clickId: click.id, currency: currencies[click.brandId % currencies.length] ?? "EUR" };
  out.push({ ...base, type: "Signup", externalId: `su-${click.id}`, occurredAt: later(5 + rand() * 60) });
  if (rand() < 0.35) {
    const deposit = (20 + Math.floor(rand() * 480)).toFixed(2);
    const ftd = {
      ...base,
      type: "FirstTimeDeposit",
      value: deposit,
      externalId: `ftd-${click.id}`,
      occurredAt: later(90),
    };
    // Programs change their minds: about 4% of first deposits are reversed (a chargeback) and 4%
    // rejected after review, each sent again with its new status as a network does, so their
    // history shows the change; those of the last two days still wait for review. Derived from
    // the amount rather than drawn, so the seeded sequence (and every other figure) stays as it was.
    const verdict = Math.floor(Number(deposit)) % 25;
    const recent = now.getTime() - click.at.getTime() < 2 * 86_400_000;
    out.push({ ...ftd, status: recent || verdict === 1 ? "pending" : "approved" });
    if (verdict === 0) out.push({ ...ftd, status: "reversed" });
    else if (verdict === 1 && !recent) out.push({ ...ftd, status: "rejected" });
    out.push({
      ...base,
      type: "CpaCommission",
      value: "150.00",
      externalId: `cpa-${click.id}`,
      occurredAt: later(1440),
    });
    if (rand() < 0.5) out.push({ ...base, type: "Qualifier", externalId: `q-${click.id}`, occurredAt: later(2000) });
    const deposits = Math.floor(rand() * 4);
    for (let i = 0; i < deposits; i++) {
      const amount = (10 + Math.floor(rand() * 290)).toFixed(2);
      out.push({
        ...base,
        type: "Deposit",
        value: amount,
        externalId: `dep-${click.id}-${i}`,
        occurredAt: later(3000 + i * 1440),
      });
      const share = (Number(amount) * 0.25).toFixed(2);
      out.push({
        ...base,
        type: "RevShareCommission",
        value: share,
        externalId: `rs-${click.id}-${i}`,
        occurredAt: later(3000 + i * 1440),
      });
    }
  }
  const end = now.toISOString();
  return out.filter((conversion) => String(conversion.occurredAt) <= end);
}

/** A deadlock or serialization failure: the transaction was rolled back and can be run again. */
function isRetryable(error: unknown): boolean {
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
  return code === "40P01" || code === "40001";
}

/**
 * Fills a tenant with traffic through the tracking code paths: clicks go through the click
 * writer (tracker creation, unique visitors, rollups), conversions through validation and the
 * conversion service (attribution, idempotency, rollups). Conversion hooks are not run: this is
 * history, and must not fire today's webhooks.
 */
export async function generateTraffic(db: Db, tenantId: string, options: TrafficOptions): Promise<TrafficSummary> {
  const rand = seededRandom(options.seed ?? 20261121);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  let catalog = await existingCatalog(db, tenantId);
  if (catalog.links.length === 0 || catalog.sources.length === 0) {
    await createCatalog(db, tenantId, options.now);
    catalog = await existingCatalog(db, tenantId);
  }
  if (options.accounts !== undefined && new Set(catalog.links.map((l) => l.accountId)).size < options.accounts) {
    await addAccounts(db, tenantId, options.accounts, options.now);
    catalog = await existingCatalog(db, tenantId);
  }
  const signupRate =
    options.conversionsPerClick === undefined
      ? 0.08
      : Math.min(1, options.conversionsPerClick / CONVERSIONS_PER_SIGNUP);
  const batchSize = options.batchSize ?? 5000;
  const concurrency = db.kind === "pglite" ? 1 : Math.max(1, Math.floor(options.concurrency ?? 1));
  const spanMs = options.days * 86_400_000;
  const start = options.now.getTime() - spanMs;
  let generated = 0;
  let clicks = 0;
  let conversions = 0;
  const write = async (batch: Click[], valid: ReturnType<typeof readConversion>[]): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await db.transaction(async (tx) => {
          await writeClicks(tx, batch, options.now);
          await recordConversions(tx, tenantId, valid, options.now);
        });
        break;
      } catch (error) {
        if (attempt >= 5 || !isRetryable(error)) throw error;
      }
    }
    clicks += batch.length;
    conversions += valid.length;
    options.onProgress?.({ clicks, conversions });
  };
  // Batches are drawn one after the other (same seed, same traffic) and written up to
  // `concurrency` at a time.
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | undefined;
  while (generated < options.clicks && failure === undefined) {
    const batch: Click[] = [];
    const size = Math.min(batchSize, options.clicks - generated);
    for (let i = 0; i < size; i++) {
      const link = pick(catalog.links);
      const sourceIndex = Math.floor(rand() * catalog.sources.length);
      const roll = rand();
      const click: Click = {
        id: newId("clk"),
        tenantId,
        // Later days get more traffic: a growing account, and recent reports are the busy ones.
        at: new Date(start + Math.sqrt(rand()) * spanMs),
        ...link,
        trafficSourceId: catalog.sources[sourceIndex] as number,
        trackerId: null,
        trackerName: rand() < 0.6 ? pick(TRACKERS) : null,
        gclid: sourceIndex === 0 && roll < 0.9 ? `gclid-${Math.floor(rand() * 1e12)}` : null,
        fbclid: sourceIndex === 1 && roll < 0.9 ? `fb-${Math.floor(rand() * 1e12)}` : null,
        msclkid: sourceIndex === 2 && roll < 0.9 ? `ms-${Math.floor(rand() * 1e12)}` : null,
        obclid: sourceIndex === 3 && roll < 0.9 ? `ob-${Math.floor(rand() * 1e12)}` : null,
        parameterA: rand() < 0.3 ? `sub${Math.floor(rand() * 20)}` : null,
        parameterB: null,
        externalClickId: null,
        utm: rand() < 0.5 ? { source: "newsletter", medium: "email" } : null,
        userAgent: pick(AGENTS),
        ip: `10.${Math.floor(rand() * 8)}.${Math.floor(rand() * 256)}.${Math.floor(rand() * 256)}`,
        country: pick(COUNTRIES) || null,
        referrer: rand() < 0.4 ? "https://www.google.com/" : null,
      };
      // The facts the click route finds in the agent (sent without client hints).
      const facts = agentFacts(click.userAgent, NO_HINTS);
      batch.push({ ...click, device: facts.device, os: facts.os, browser: facts.browser });
    }
    const inputs = batch.flatMap((click) =>
      conversionsOf(rand, click, options.now, signupRate, options.currencies ?? BRAND_CURRENCIES),
    );
    const valid = inputs.map((input) => readConversion(input, "", options.now));
    generated += batch.length;
    const written: Promise<void> = write(batch, valid)
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => inFlight.delete(written));
    inFlight.add(written);
    if (inFlight.size >= concurrency) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  if (failure !== undefined) throw failure.error;
  return { clicks, conversions, links: catalog.links.length, trafficSources: catalog.sources.length };
}
