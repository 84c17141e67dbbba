import { join } from "node:path";
import { buildApp } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";
import { seedDemo } from "./features/demo/seed.js";
import { generateTraffic } from "./features/demo/traffic.js";
import { migrate, openDatabase } from "./platform/db/index.js";
import { DirectoryLockedError } from "./platform/dir-lock.js";
import { type BackgroundRole, startHeartbeat } from "./platform/heartbeat.js";
import { listenMetrics } from "./platform/metrics.js";
import { startScheduler } from "./platform/scheduler.js";
import { loadOrCreateSecret } from "./platform/secrets.js";
import { parseRoles } from "./roles.js";

const SHUTDOWN_GRACE_MS = 15_000;
const DEMO_TRAFFIC = { days: 30, clicks: 20_000 };

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const roles = parseRoles(process.argv.slice(2));
  const db = await openDatabase(config);
  // Without the statement timeout: a migration may rightly take longer than a request's statement.
  const applied = await migrate(db.unbounded());
  const jwtSecret = config.jwtSecret ?? (await loadOrCreateSecret(config.dataDir, "jwt-secret"));
  // Clicks beyond the memory bound wait under DATA_DIR while the database is away (docs/limits.md).
  const clicks = { spillDir: join(config.dataDir, "click-spill") };
  const { app, ctx } = await buildApp({ config, db, jwtSecret, clicks });
  const log = app.log;
  if (applied.length > 0) log.info({ migrations: applied }, "database migrated");

  const background = roles.filter((r): r is BackgroundRole => r === "worker" || r === "scheduler");
  const heartbeat = background.length > 0 ? await startHeartbeat({ ...ctx, roles: background, log }) : undefined;
  const scheduler = roles.includes("scheduler") ? startScheduler({ ...ctx, log }) : undefined;
  if (roles.includes("worker")) {
    ctx.mail.start();
    await ctx.delivery.start();
    await ctx.notifications.worker.start();
  }

  if (roles.includes("api")) await app.listen({ port: config.port, host: config.host });
  else await app.ready();
  // METRICS_PORT: /metrics only on its own listener, whatever the roles (workers have metrics too).
  const { metricsPort } = config;
  const metricsServer =
    metricsPort === undefined
      ? undefined
      : await listenMetrics(
          app,
          { port: metricsPort, key: config.metricsKey, healthKey: config.healthKey },
          config.host,
        );

  // Seeded only once the service is up, so its one-time secrets are never lost to a failed start.
  const demo = config.seedDemo ? await seedDemo(ctx) : null;
  if (demo) {
    // Enough traffic that reports are not empty; `npm run seed` makes more.
    const traffic = await generateTraffic(db, demo.tenantId, { ...DEMO_TRAFFIC, now: ctx.clock.now() });
    log.info(traffic, "demo traffic generated");
  }

  // Installed before the addresses are printed: whoever waits for them may signal at once.
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down: draining requests");
    const force = setTimeout(() => {
      log.error("shutdown took too long; exiting");
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    try {
      await scheduler?.stop();
      await ctx.mail.stop();
      await ctx.delivery.stop();
      await ctx.notifications.worker.stop();
      await app.close();
      await metricsServer?.close();
      log.info("requests drained; closing the database");
      await heartbeat?.stop();
      await db.close();
      log.info("stopped");
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, "shutdown failed");
      process.exit(1);
    }
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));

  const base = config.publicBaseUrl;
  const lines = [
    "",
    `Tracking platform ${ctx.build.version} running roles: ${roles.join(", ")} on ${db.kind === "pglite" ? "embedded PGlite" : "PostgreSQL"}`,
  ];
  if (roles.includes("api")) {
    lines.push(
      `  API:           ${base}/api/v1`,
      `  API explorer:  ${base}/api/swagger`,
      `  API reference: ${base}/api/docs`,
      `  Health:        ${base}/api/health`,
    );
  }
  if (demo) {
    lines.push(
      "",
      "Demo data seeded. These secrets are shown only now:",
      `  Demo login:    ${demo.email} / ${demo.password}   (POST /api/v1/auth)`,
      `  Demo API key:  ${demo.apiKey}   (scope reports.read; Authorization: ApiKey <key>)`,
      `  Legacy key:    ${demo.legacyApiKey}   (no scopes)`,
      `  Postback URL:  ${base}/postback/${demo.postbackKey}?clickId=<clickId>&type=Deposit&value=10&currency=EUR`,
      `  Demo traffic:  ${DEMO_TRAFFIC.clicks} clicks over the last ${DEMO_TRAFFIC.days} days; npm run seed makes more`,
    );
  } else if (config.seedDemo) {
    lines.push("", "Demo tenant already exists; its login and key were printed at first start.");
  }
  console.log(`${lines.join("\n")}\n`);
}

main().catch((error: unknown) => {
  // Both name what to fix; a stack trace would only hide the message.
  if (error instanceof ConfigError || error instanceof DirectoryLockedError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
