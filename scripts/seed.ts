/**
 * Fills a tenant with a realistic catalog and traffic:
 *   npm run seed -- --days 90 --clicks 1000000 [--tenant ten_...] [--seed 42]
 * Without --tenant it fills the demo tenant, creating it (and printing its login) if missing.
 * --days is at most the raw-event retention (RAW_EVENT_RETENTION_DAYS, 120): an older conversion
 * is refused (and the retention job would delete it), so a longer span is refused before any work.
 * On the embedded database, stop `npm start` first: PGlite is one process's database, and the
 * seed refuses to open a data directory another process holds (it names that process's pid).
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.js";
import { DEMO_TENANT, seedDemo } from "../src/features/demo/seed.js";
import { DEMO_CURRENCIES, generateTraffic } from "../src/features/demo/traffic.js";
import { RAW_EVENT_RETENTION_DAYS } from "../src/features/tracking/retention.js";
import { systemClock } from "../src/platform/clock.js";
import { migrate, openDatabase } from "../src/platform/db/index.js";

function positive(name: string, value: string | undefined, fallback: number): number {
  const n = value === undefined ? fallback : Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got '${value}'`);
  return n;
}

function bar(done: number, total: number, started: number, conversions: number): string {
  const width = 30;
  const filled = Math.round((done / total) * width);
  const seconds = (Date.now() - started) / 1000;
  const rate = Math.round(done / Math.max(seconds, 0.001));
  const eta = rate > 0 ? Math.ceil((total - done) / rate) : 0;
  return `\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${((done / total) * 100).toFixed(1)}% ${done}/${total} clicks, ${conversions} conversions, ${rate} clicks/s, eta ${eta}s `;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      days: { type: "string" },
      clicks: { type: "string" },
      tenant: { type: "string" },
      seed: { type: "string" },
    },
  });
  const days = positive("days", values.days, 90);
  if (days > RAW_EVENT_RETENTION_DAYS) {
    throw new Error(
      `--days must be at most ${RAW_EVENT_RETENTION_DAYS} (the raw-event retention: older conversions are refused), got ${days}`,
    );
  }
  const clicks = positive("clicks", values.clicks, 100_000);
  const seed = positive("seed", values.seed, Date.now() % 1_000_000_000);
  const config = loadConfig(process.env);
  const db = await openDatabase(config);
  try {
    await migrate(db);
    let tenantId = values.tenant;
    if (tenantId === undefined) {
      const created = await seedDemo({ db, clock: systemClock });
      if (created)
        console.log(`Demo tenant created. Login ${created.email} / ${created.password}; API key ${created.apiKey}`);
      const [demo] = await db.query<{ id: string }>("select id from tenants where name = $1", [DEMO_TENANT]);
      tenantId = demo?.id;
    } else {
      const [found] = await db.query("select 1 from tenants where id = $1", [tenantId]);
      if (!found) throw new Error(`--tenant ${tenantId} does not exist`);
    }
    if (tenantId === undefined) throw new Error("no tenant to fill");
    console.log(`Seeding ${clicks} clicks over ${days} days into tenant ${tenantId} (${db.kind})`);
    const started = Date.now();
    const summary = await generateTraffic(db, tenantId, {
      days,
      clicks,
      seed,
      now: new Date(),
      // The demo tenant has rates for its four currencies; another tenant gets the default three.
      ...(values.tenant === undefined ? { currencies: DEMO_CURRENCIES } : {}),
      onProgress: (p) => process.stderr.write(bar(p.clicks, clicks, started, p.conversions)),
    });
    process.stderr.write("\n");
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.log(
      `Done in ${seconds}s: ${summary.clicks} clicks, ${summary.conversions} conversions on ${summary.links} links and ${summary.trafficSources} traffic sources`,
    );
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
