import { join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { buildApp } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";
import { type DemoCredentials, seedDemo } from "./features/demo/seed.js";
import { DEMO_CURRENCIES, generateTraffic } from "./features/demo/traffic.js";
import { migrate, openDatabase } from "./platform/db/index.js";
import { DirectoryLockedError } from "./platform/dir-lock.js";
import { type BackgroundRole, startHeartbeat } from "./platform/heartbeat.js";
import { listenMetrics } from "./platform/metrics.js";
import { startScheduler } from "./platform/scheduler.js";
import { nodeSecrets, requireSharedSecrets } from "./platform/secrets.js";
import { parseRoles } from "./roles.js";

const SHUTDOWN_GRACE_MS = 15_000;
const DEMO_TRAFFIC = { days: 30, clicks: 20_000, currencies: DEMO_CURRENCIES };

/** Milliseconds since the process started: where a start spends its time. */
const since = () => Math.round(process.uptime() * 1000);

async function main(): Promise<void> {
  const phases: Record<string, number> = { modulesLoaded: since() };
  const config = loadConfig(process.env);
  const roles = parseRoles(process.argv.slice(2));
  // Before the database: a PostgreSQL node without the shared secrets stops at once.
  requireSharedSecrets(config);
  const db = await openDatabase(config);
  phases.databaseOpen = since();
  // Without the statement timeout: a migration may rightly take longer than a request's statement.
  const applied = await migrate(db.unbounded());
  phases.migrated = since();
  // After the open: on the embedded database DATA_DIR is locked, so one process generates them.
  const { jwtSecret, keyring, generatedKeyFile } = await nodeSecrets(config);
  // Clicks beyond the memory bound wait under DATA_DIR while the database is away (docs/limits.md).
  const clicks = { spillDir: join(config.dataDir, "click-spill") };
  const { app, ctx, workers } = await buildApp({ config, db, jwtSecret, secretsKey: keyring, clicks });
  phases.appBuilt = since();
  const log = app.log;
  if (applied.length > 0) log.info({ migrations: applied }, "database migrated");
  const keyLines = generatedKeyFile === undefined ? [] : generatedKeyLines(generatedKeyFile);
  if (generatedKeyFile !== undefined) log.warn({ file: generatedKeyFile }, keyLines.join(" "));

  const background = roles.filter((r): r is BackgroundRole => r === "worker" || r === "scheduler");
  const heartbeat = background.length > 0 ? await startHeartbeat({ ...ctx, roles: background, log }) : undefined;
  const scheduler = roles.includes("scheduler") ? startScheduler({ ...ctx, log }) : undefined;
  // Stopped by app.close() (buildApp owns them), after the requests have drained.
  if (roles.includes("worker")) await workers.start();

  // Demo data before the port opens: on the embedded database its traffic takes seconds of the
  // only connection, and a request arriving meanwhile (a health check) would hang until it is done.
  const demo = config.seedDemo ? await seedDemo(ctx) : null;
  if (demo) {
    // Enough traffic that reports are not empty; `npm run seed` makes more.
    const traffic = await generateTraffic(db, demo.tenantId, { ...DEMO_TRAFFIC, now: ctx.clock.now() });
    log.info(traffic, "demo traffic generated");
  }
  phases.demoChecked = since();

  try {
    if (roles.includes("api")) await app.listen({ port: config.port, host: config.host });
    else await app.ready();
    phases.ready = since();
    // Milliseconds since the process started at the end of each step (docs/benchmarks.md, Startup).
    log.info({ startupMs: phases }, "started");
  } catch (error) {
    // The demo secrets exist nowhere else: a start that fails now (port taken) still shows them.
    if (demo)
      // Straight to stdout: the process exits next, and these must not wait in a buffer.
      printBanner(
        process.stdout,
        demoLines(demo, config.publicBaseUrl),
        "Demo data seeded, but the service did not start",
      );
    throw error;
  }
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
      // Closing the app stops the worker loops and the click buffer (written before the database goes).
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
  // `on`, not `once`: Ctrl-C reaches this process twice under `npm start` (from the terminal to
  // the whole process group, and forwarded by npm); a second signal must not kill the drain.
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));

  const base = config.publicBaseUrl;
  const lines: string[] = [];
  if (roles.includes("api")) {
    lines.push(
      `Dashboard:     ${base}/`,
      `API:           ${base}/api/v1`,
      `API explorer:  ${base}/api/swagger   (Authorize: paste "ApiKey " and then the key)`,
      `API reference: ${base}/api/docs`,
      `Health:        ${base}/api/health`,
    );
  }
  if (demo) lines.push("", ...demoLines(demo, base));
  else if (config.seedDemo) {
    lines.push(
      "",
      "Demo tenant already exists; its login and keys were shown at its first start only.",
      ...NEW_DEMO_LOGIN,
    );
  }
  if (keyLines.length > 0) lines.push("", ...keyLines);
  lines.push("", "Stop with Ctrl-C (or SIGTERM): requests drain, buffered clicks are written, then it exits.");
  const where = db.kind === "pglite" ? "embedded PGlite" : "PostgreSQL";
  printBanner(
    logOutput(log),
    lines,
    `Tracking platform ${ctx.build.version} running roles: ${roles.join(", ")} on ${where}`,
  );
}

/** Where the generated secrets key lives, and what a copy of it gives (docs/operations.md). */
function generatedKeyLines(file: string): string[] {
  return [
    `SECRETS_KEY is unset: stored secrets are sealed with the key generated into ${file}.`,
    "A copy of that file with the database opens every stored Google Ads credential and webhook secret:",
    "back it up apart from DATA_DIR, or set SECRETS_KEY (docs/operations.md, Secrets key).",
  ];
}

const NEW_DEMO_LOGIN = [
  "New demo login: stop the service, run `npm run demo:reset` (removes the demo tenant and its data,",
  "other tenants untouched), then start again: a new demo tenant is seeded and its secrets shown.",
];

function demoLines(demo: DemoCredentials, base: string): string[] {
  return [
    "Demo data seeded. These secrets are shown only now (stored nowhere in clear text):",
    `  Demo login:    ${demo.email} / ${demo.password}   (POST /api/v1/auth)`,
    `  Demo API key:  ${demo.apiKey}`,
    "                 scope reports.read; send it as the header Authorization: ApiKey <key>",
    `  Legacy key:    ${demo.legacyApiKey}`,
    "                 a key without scopes, as keys made before scopes existed: same /api/v1 access,",
    "                 but refused by /mcp (which needs reports.read); listed with legacy: true",
    `  Postback URL:  ${base}/postback/${demo.postbackKey}?clickId=<clickId>&type=Deposit&value=10&currency=EUR`,
    "                 (replace <clickId> with the id of a real click: the network's macro fills it)",
    `  Demo traffic:  ${DEMO_TRAFFIC.clicks} clicks over the last ${DEMO_TRAFFIC.days} days; npm run seed makes more`,
    ...NEW_DEMO_LOGIN,
  ];
}

/**
 * The logger's own output (pino's stream, found by the name of pino's public symbol), or stdout
 * when there is none. Pino writes stdout asynchronously, a line at a time: text written to its
 * stream is queued behind the log lines so far (the listen line), where a console.log could
 * overtake them.
 */
function logOutput(log: FastifyBaseLogger): { write(text: string): unknown } {
  for (let node: object | null = log; node !== null; node = Object.getPrototypeOf(node)) {
    const symbol = Object.getOwnPropertySymbols(node).find((s) => s.description === "pino.stream");
    const stream: unknown = symbol === undefined ? undefined : (node as Record<symbol, unknown>)[symbol];
    if (typeof stream === "object" && stream !== null && "write" in stream && typeof stream.write === "function") {
      return stream as { write(text: string): unknown };
    }
  }
  return process.stdout;
}

/**
 * Prints a block that stands apart from the log lines: a blank line, a heading, ruled off above
 * and below, after the log lines written so far.
 */
function printBanner(output: { write(text: string): unknown }, lines: string[], heading: string): void {
  const rule = "=".repeat(Math.min(100, Math.max(heading.length, ...lines.map((l) => l.length)) + 4));
  output.write(
    `${["", rule, `  ${heading}`, rule, ...lines.map((l) => (l === "" ? "" : `  ${l}`)), rule, ""].join("\n")}\n`,
  );
}

main().catch((error: unknown) => {
  // Both name what to fix; a stack trace would only hide the message.
  if (error instanceof ConfigError || error instanceof DirectoryLockedError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
