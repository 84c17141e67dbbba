import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createWebhook } from "../src/features/outgoing-webhooks/settings-service.js";
import { createTenant } from "../src/features/tenants/index.js";
import { migrate } from "../src/platform/db/migrate.js";
import { openPostgres } from "../src/platform/db/postgres.js";
import type { Db } from "../src/platform/db/types.js";
import { createPostgresSchema, postgresUrl } from "./helpers/db.js";
import { freePort, POSTGRES_NODE_SECRETS, type Started, start, waitFor } from "./helpers/process.js";

// Crash test: the service is killed with SIGKILL in the middle of a burst of
// conversions whose deliveries a slow receiver is taking; started again, it delivers every
// event at least once, and no event is marked Delivered unless the receiver got it.

const CONVERSIONS = 5_000;
const SENDERS = 25;
const SYSTEM = { type: "system", name: "crash test" } as const;

/** Answers every delivery 200 after a pause, and keeps how often each conversion arrived. */
async function slowReceiver(delayMs: number): Promise<{ server: Server; base: string; seen: Map<string, number> }> {
  const seen = new Map<string, number>();
  const server = createServer((request, response) => {
    const id = new URL(request.url ?? "/", "http://x").searchParams.get("c") ?? "";
    request.resume();
    setTimeout(() => {
      // Counted when answered: a request cut off by the crash never got its 200.
      seen.set(id, (seen.get(id) ?? 0) + 1);
      response.end("ok");
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.runIf(inject("dbKind") === "postgres")("a worker killed mid-burst", () => {
  let db: Db;
  let drop: () => Promise<void>;
  let receiver: Awaited<ReturnType<typeof slowReceiver>>;
  const running: Started[] = [];

  beforeAll(async () => {
    const created = await createPostgresSchema();
    drop = created.drop;
    db = openPostgres({ connectionString: postgresUrl(), schema: created.schema, max: 3 });
    await migrate(db);
    receiver = await slowReceiver(300);
  });

  afterAll(async () => {
    for (const started of running) if (started.child.exitCode === null) started.child.kill("SIGKILL");
    await db?.close();
    await drop?.();
    receiver?.server.closeAllConnections();
    await new Promise((resolve) => receiver?.server.close(resolve));
  });

  it("delivers every event at least once after a restart, and never marks one delivered that did not arrive", async () => {
    const now = new Date();
    const tenant = await createTenant(db, { name: "Crash test", webhookAllowance: null }, SYSTEM, now);
    await createWebhook(
      db,
      { name: "Slow receiver", url: `${receiver.base}/crash?c=\${conversionId}`, method: "GET" },
      { tenantId: tenant.id, actor: SYSTEM, at: now, clickWebhooks: false },
    );
    const port = await freePort();
    const url = new URL(postgresUrl());
    url.searchParams.set(
      "options",
      `-c search_path=${(await db.query<{ s: string }>("select current_schema() as s"))[0]?.s},public`,
    );
    const env = {
      DATABASE_URL: url.toString(),
      ...POSTGRES_NODE_SECRETS,
      PORT: String(port),
      HOST: "127.0.0.1",
      WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
      WEBHOOK_TIMEOUT_MS: "2000",
      SEED_DEMO: "false",
    };
    const first = start([], env);
    running.push(first);
    await waitFor(first, /running roles: api, worker, scheduler on PostgreSQL/);

    // The burst: conversions through the delivery endpoint from many senders at once.
    let next = 0;
    const acknowledged = new Set<string>();
    const send = async (base: string): Promise<void> => {
      while (next < CONVERSIONS) {
        const n = next++;
        try {
          const answer = await fetch(`${base}/postback/${tenant.postbackKey}?type=Signup&externalId=crash-${n}`);
          const body = (await answer.json()) as { conversionId?: string };
          if ((answer.status === 201 || answer.status === 200) && body.conversionId)
            acknowledged.add(body.conversionId);
          else next = Math.min(next, n);
        } catch {
          // The process died under this request: it is sent again once the service is back.
          next = Math.min(next, n);
          return;
        }
      }
    };
    const base = `http://127.0.0.1:${port}`;
    const burst = Promise.all(Array.from({ length: SENDERS }, () => send(base)));
    await until(() => receiver.seen.size >= 300, 60_000, "the first deliveries");
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    await burst;
    expect(next).toBeLessThan(CONVERSIONS);

    const second = start([], env);
    running.push(second);
    await waitFor(second, /running roles: api, worker, scheduler on PostgreSQL/);
    // The rest of the burst, repeating the ones cut off (externalId makes a repeat a duplicate).
    await Promise.all(Array.from({ length: SENDERS }, () => send(base)));
    expect(next).toBe(CONVERSIONS);

    // Events a dead worker had claimed wait for their lease to run out (2 x timeout + 30 s).
    const pending = async () =>
      (
        await db.query<{ n: number }>(
          "select count(*)::int as n from webhook_events where tenant_id = $1 and status <> 'Delivered'",
          [tenant.id],
        )
      )[0]?.n;
    await until(async () => (await pending()) === 0, 90_000, "every event to be delivered");

    const events = await db.query<{ conversion_id: string; attempts: number }>(
      "select conversion_id, attempts from webhook_events where tenant_id = $1",
      [tenant.id],
    );
    const conversions = await db.query<{ id: string }>("select id from conversions where tenant_id = $1", [tenant.id]);
    expect(conversions).toHaveLength(CONVERSIONS);
    for (const id of acknowledged) expect(conversions.some((c) => c.id === id)).toBe(true);
    // One event per conversion, each Delivered, and the receiver answered every one of them.
    expect(events).toHaveLength(CONVERSIONS);
    const missing = events.filter((e) => !receiver.seen.has(e.conversion_id));
    expect(missing).toEqual([]);
    // Delivered at least once: the crash may have cut off attempts that are then made again.
    const repeated = [...receiver.seen.values()].filter((count) => count > 1).length;
    expect(repeated).toBeLessThan(CONVERSIONS);

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  }, 240_000);
});
