import Fastify from "fastify";
import { DeliveryWorker } from "../../src/features/outgoing-webhooks/worker.js";
import { systemClock } from "../../src/platform/clock.js";
import { openPostgres } from "../../src/platform/db/postgres.js";
import { AddressPolicy } from "../../src/platform/webhook-sender.js";

/**
 * One delivery worker process of the benchmark: the service's own DeliveryWorker on the bench
 * schema, until the parent sends "stop" (or SIGTERM).
 */
const url = process.env.BENCH_WORKER_DATABASE_URL;
const schema = process.env.BENCH_WORKER_SCHEMA;
if (!url || !schema) throw new Error("BENCH_WORKER_DATABASE_URL and BENCH_WORKER_SCHEMA are required");
const db = openPostgres({ connectionString: url, schema, max: 10 });
const worker = new DeliveryWorker({
  db,
  clock: systemClock,
  log: Fastify({ logger: { level: "warn" } }).log,
  settings: { timeoutMs: 10_000, retryIntervalMs: 3_600_000, policy: new AddressPolicy(["127.0.0.1"]) },
});
await worker.start();
process.send?.("ready");
const stop = async () => {
  await worker.stop();
  await db.close();
  process.exit(0);
};
process.on("message", (message) => {
  if (message === "stop") void stop();
});
process.on("SIGTERM", () => void stop());
