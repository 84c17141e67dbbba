import { copyFile, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import type { ClickBufferOptions } from "../src/features/tracking/index.js";
import { HEALTH_KEY, seedTenancy, startTestApp, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, seedCatalog } from "./helpers/catalog.js";
import { openTestDb, type TestDb } from "./helpers/db.js";

// The click buffer is bounded in bytes while the database does not take writes. Beyond the
// bound clicks spill to a file under DATA_DIR and are replayed, each stored exactly once, when
// it returns (also when a crash left a replayed file behind); without room to spill they are
// refused, the visitor still redirected. Crafted clicks (every parameter at its maximum) are
// what would exhaust a heap bounded by count.

const BROWSER = `Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0 ${"x".repeat(900)}`;
const LONG = "p".repeat(500);
const CRAFTED = ["gclid", "fbclid", "msclkid", "obclid", "pa", "pb", "ext", "utm_source", "utm_campaign"]
  .map((name) => `${name}=${LONG}`)
  .join("&");
const MAX_BYTES = 256 * 1024;

async function clickCount(db: TestDb): Promise<{ clicks: number; distinct: number; rollup: number }> {
  const [row] = await db.db.query<{ clicks: string; distinct: string }>(
    "select count(*) as clicks, count(distinct id) as distinct from clicks",
  );
  const [rollup] = await db.db.query<{ clicks: string | null }>("select sum(clicks) as clicks from daily_rollups");
  return { clicks: Number(row?.clicks), distinct: Number(row?.distinct), rollup: Number(rollup?.clicks ?? 0) };
}

describe("the click buffer's bound in bytes", () => {
  let testDb: TestDb;
  let spillDir: string;
  const nodes: TestApp[] = [];

  beforeEach(async () => {
    testDb = await openTestDb();
    spillDir = join(await mkdtemp(join(tmpdir(), "tp-spill-")), "click-spill");
  });
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.app.close().catch(() => undefined);
    await testDb.dispose();
    await rm(join(spillDir, ".."), { recursive: true, force: true });
  });

  async function node(clicks: ClickBufferOptions): Promise<TestApp> {
    const t = await startTestApp({ testDb, app: { clicks: { intervalMs: 3_600_000, ...clicks } } });
    nodes.push(t);
    return t;
  }

  async function clickMany(t: TestApp, catalog: CatalogFixture, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const res = await t.call({
        method: "GET",
        url: `/go/${catalog.linkId}/${catalog.trafficSourceId}?${CRAFTED}&n=${i}`,
        headers: { "user-agent": BROWSER, referer: `https://ref.example/${"r".repeat(1900)}` },
      });
      // Refused or not, the visitor is sent on.
      expect(res.statusCode).toBe(302);
    }
  }

  /** Flushes until memory and spill are empty (a replay goes a batch at a time). */
  async function drain(t: TestApp): Promise<void> {
    const buffer = t.ctx.tracking.clicks;
    for (let i = 0; i < 200 && (buffer.size > 0 || buffer.spilledBytes > 0); i++) await buffer.flush();
    expect(buffer.size).toBe(0);
    expect(buffer.spilledBytes).toBe(0);
  }

  it("refuses clicks beyond the bound without a spill directory, counts them, and writes the kept ones", async () => {
    const t = await node({ maxBytes: MAX_BYTES });
    const owner = await seedTenancy(t);
    const catalog = await seedCatalog(t, owner);
    await testDb.db.exec("alter table clicks rename to clicks_away");
    const buffer = t.ctx.tracking.clicks;
    const n = 150;
    await clickMany(t, catalog, n);
    await buffer.flush();
    expect(buffer.bytes).toBeLessThanOrEqual(MAX_BYTES);
    expect(buffer.refused).toBeGreaterThan(0);
    expect(buffer.size + buffer.refused).toBe(n);
    const metrics = await t.call({ method: "GET", url: "/metrics", headers: { "x-health-key": HEALTH_KEY } });
    expect(metrics.body).toContain(`clicks_refused_total ${buffer.refused}`);
    expect(metrics.body).toContain(`click_buffer_bytes ${buffer.bytes}`);

    await testDb.db.exec("alter table clicks_away rename to clicks");
    const kept = buffer.size;
    await drain(t);
    expect(await clickCount(testDb)).toEqual({ clicks: kept, distinct: kept, rollup: kept });
  });

  it("spills beyond the bound and stores every click exactly once, also when a replayed file is replayed again", async () => {
    const t = await node({ maxBytes: MAX_BYTES, spillDir });
    const owner = await seedTenancy(t);
    const catalog = await seedCatalog(t, owner);
    await testDb.db.exec("alter table clicks rename to clicks_away");
    const buffer = t.ctx.tracking.clicks;
    const n = 150;
    await clickMany(t, catalog, n);
    await buffer.flush();
    expect(buffer.bytes).toBeLessThanOrEqual(MAX_BYTES);
    expect(buffer.refused).toBe(0);
    expect(buffer.spilled).toBeGreaterThan(0);
    expect(buffer.size + buffer.spilled).toBe(n);
    expect(buffer.spilledBytes).toBeGreaterThan(0);
    const metrics = await t.call({ method: "GET", url: "/metrics", headers: { "x-health-key": HEALTH_KEY } });
    expect(metrics.body).toContain(`clicks_spilled_total ${buffer.spilled}`);
    expect(metrics.body).toContain(`click_spill_bytes ${buffer.spilledBytes}`);

    // Keep a copy of the spill as it is: a crash after its replay but before its deletion
    // leaves exactly this file behind.
    const segments = (await readdir(spillDir)).filter((name) => name.endsWith(".jsonl"));
    expect(segments.length).toBeGreaterThan(0);
    const aside = await mkdtemp(join(tmpdir(), "tp-spill-copy-"));
    for (const name of segments) await copyFile(join(spillDir, name), join(aside, name));

    await testDb.db.exec("alter table clicks_away rename to clicks");
    await drain(t);
    expect(buffer.replayed).toBe(buffer.spilled);
    expect(await clickCount(testDb)).toEqual({ clicks: n, distinct: n, rollup: n });
    expect((await readdir(spillDir)).filter((name) => name.endsWith(".jsonl"))).toEqual([]);
    await t.app.close();

    // The next start finds the file again and replays it: nothing is stored twice.
    for (const name of segments) await copyFile(join(aside, name), join(spillDir, name));
    await rm(aside, { recursive: true, force: true });
    const next = await node({ maxBytes: MAX_BYTES, spillDir });
    expect(next.ctx.tracking.clicks.spilledBytes).toBeGreaterThan(0);
    await drain(next);
    expect(await clickCount(testDb)).toEqual({ clicks: n, distinct: n, rollup: n });
  });

  it("spills what is still in memory when it stops with the database away, and replays it at the next start", async () => {
    const t = await node({ maxBytes: MAX_BYTES, spillDir });
    const owner = await seedTenancy(t);
    const catalog = await seedCatalog(t, owner);
    await testDb.db.exec("alter table clicks rename to clicks_away");
    const n = 10;
    await clickMany(t, catalog, n);
    expect(t.ctx.tracking.clicks.size).toBe(n);
    await t.app.close();
    await testDb.db.exec("alter table clicks_away rename to clicks");
    expect(await clickCount(testDb)).toEqual({ clicks: 0, distinct: 0, rollup: 0 });

    const next = await node({ maxBytes: MAX_BYTES, spillDir });
    await drain(next);
    expect(await clickCount(testDb)).toEqual({ clicks: n, distinct: n, rollup: n });
  }, 60_000);

  it("refuses beyond CLICK_SPILL_MAX_BYTES too", async () => {
    const t = await node({ maxBytes: MAX_BYTES, spillDir, spillMaxBytes: 64 * 1024 });
    const owner = await seedTenancy(t);
    const catalog = await seedCatalog(t, owner);
    await testDb.db.exec("alter table clicks rename to clicks_away");
    const buffer = t.ctx.tracking.clicks;
    const n = 150;
    await clickMany(t, catalog, n);
    expect(buffer.spilledBytes).toBeLessThanOrEqual(64 * 1024);
    expect(buffer.spilled).toBeGreaterThan(0);
    expect(buffer.refused).toBeGreaterThan(0);
    expect(buffer.size + buffer.spilled + buffer.refused).toBe(n);
    await testDb.db.exec("alter table clicks_away rename to clicks");
    const kept = buffer.size + buffer.spilled;
    await drain(t);
    expect(await clickCount(testDb)).toEqual({ clicks: kept, distinct: kept, rollup: kept });
  });
});

describe("the buffer bounds' configuration", () => {
  it("has generous defaults and names the variable of a bad value", () => {
    expect(loadConfig({}).buffers).toEqual({
      clickBufferMaxBytes: 64 * 1024 * 1024,
      clickSpillMaxBytes: 1024 * 1024 * 1024,
      usageBufferMaxBytes: 16 * 1024 * 1024,
    });
    expect(loadConfig({ CLICK_SPILL_MAX_BYTES: "0" }).buffers.clickSpillMaxBytes).toBe(0);
    expect(() => loadConfig({ CLICK_BUFFER_MAX_BYTES: "lots" })).toThrow(
      /CLICK_BUFFER_MAX_BYTES must be a whole number/,
    );
    expect(() => loadConfig({ USAGE_BUFFER_MAX_BYTES: "10" })).toThrow(/USAGE_BUFFER_MAX_BYTES must be between/);
  });
});
