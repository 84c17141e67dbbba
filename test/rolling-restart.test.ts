/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { migrate } from "../src/platform/db/migrate.js";
import { openPostgres } from "../src/platform/db/postgres.js";
import type { Db } from "../src/platform/db/types.js";
import { newId } from "../src/platform/ids.js";
import { startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import type { CatalogFixture } from "./helpers/catalog.js";
import { createPostgresSchema, postgresUrl } from "./helpers/db.js";
import { freePort, POSTGRES_NODE_SECRETS } from "./helpers/process.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import { type Answer, RoundRobin } from "./helpers/rolling-balancer.js";
import { RollingNode } from "./helpers/rolling-cluster.js";
import { RawConnection } from "./helpers/rolling-socket.js";
import { createHook, seedTenantWithCatalog, WEBHOOK_ENV } from "./helpers/webhooks.js";

// Two API nodes and a worker as real processes on one PostgreSQL, under steady clicks and
// conversions sent through both nodes (round robin, a refused connection retried on the other
// node as a balancer would), while each node in turn is stopped with SIGTERM and started again.
// Every acknowledged click and conversion must be stored exactly once, every conversion's
// postback delivered, and no request answered 5xx: a draining node stops accepting before it
// refuses anything and finishes what it took.

const onPostgres = inject("dbKind") === "postgres";
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36";
const JWT_SECRET = "rolling-restart-jwt-secret-0123456789abcdef";
/** Concurrent senders; each makes a click, then a conversion for it, then pauses a little. */
const SENDERS = 6;
const PAUSE_MS = 15;
/** Load before, between and after the restarts. */
const SETTLE_MS = 2_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Rejects after `ms` with `message`: turns a hang into a failure that says what hung. */
const within = <T>(ms: number, promise: Promise<T>, message: string): Promise<T> =>
  Promise.race([
    promise,
    pause(ms).then(() => {
      throw new Error(message);
    }),
  ]);

// What a draining node does with the connections it has, on one in-process node listening on
// loopback. The request under way is a conversion naming a click id made just now that no node
// wrote: the node waits up to 2 s for another node's buffer to write it, so it is still being
// answered when the node starts closing.
describe("draining a node", () => {
  let t: TestApp;
  let who: Tenancy;
  let cat: CatalogFixture;
  let port: number;
  let connection: RawConnection | undefined;

  beforeEach(async () => {
    t = await startTestApp();
    ({ who, cat } = await seedTenantWithCatalog(t));
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    connection?.destroy();
    await t.close();
  });

  const slowConversion = (c: RawConnection) =>
    c.send("POST", "/api/v1/conversions", { authorization: who.apiKey }, { type: "Signup", clickId: newId("clk") });

  it("serves, not refuses, a request that reaches it on an open keep-alive connection", async () => {
    connection = await RawConnection.open(port);
    slowConversion(connection);
    await pause(300);
    const closed = t.app.close();
    await pause(200);
    // Written behind the answer under way, after the listener closed: a balancer sent it here.
    connection.send("GET", `/go/${cat.linkId}/${cat.trafficSourceId}`, { "user-agent": BROWSER });
    await within(10_000, connection.ended, "the node kept the connection open");
    expect(connection.statuses()).toEqual([201, 302]);
    await closed;
    // The click it acknowledged was written before the node let go of the database.
    const clickId = new URL(String(connection.header("location")[0])).searchParams.get("cid");
    expect(await t.ctx.db.query("select id from clicks where id = $1", [clickId])).toHaveLength(1);
  });

  it("closes a keep-alive connection once its answer is sent, without waiting for the client", async () => {
    connection = await RawConnection.open(port);
    slowConversion(connection);
    await pause(300);
    const began = Date.now();
    const closed = t.app.close();
    // Left alone, the connection would stay open for the keep-alive timeout (72 s), past the
    // shutdown grace: the stop would fail before the buffered clicks are written.
    await within(8_000, connection.ended, "the node kept an idle keep-alive connection open while closing");
    expect(connection.statuses()).toEqual([201]);
    await within(8_000, closed, "closing did not finish");
    expect(Date.now() - began).toBeLessThan(8_000);
  });
});

interface Sent {
  clicks: string[];
  /** Acknowledged conversions: the externalId sent and the id answered. */
  conversions: { externalId: string; id: string; via: "api" | "postback"; attributed: boolean }[];
  /** Answers that were not the expected 302/201 (a 5xx, a 4xx, a duplicate...). */
  unexpected: { status: number; path: string; node: number; body: string }[];
}

describe.runIf(onPostgres)(
  "rolling restart (PostgreSQL only: separate processes need a shared database server)",
  () => {
    let schema: { schema: string; drop(): Promise<void> };
    let db: Db;
    let rx: Receiver;
    let dataDir: string;
    let who: Tenancy;
    let cat: CatalogFixture;
    const nodes: RollingNode[] = [];

    beforeAll(async () => {
      schema = await createPostgresSchema();
      db = openPostgres({ connectionString: postgresUrl(), schema: schema.schema, max: 3 });
      await migrate(db);
      rx = await startReceiver();
      dataDir = await mkdtemp(join(tmpdir(), "tp-rolling-"));
      // The tenant, its catalog and an affiliate-level webhook (every conversion) to the receiver,
      // made through the API of an in-process node that is closed before the real ones start.
      const testDb = {
        db,
        kind: "postgres" as const,
        openAnother: () => db,
        dispose: async () => undefined,
      };
      const seeder = await startTestApp({ testDb, env: WEBHOOK_ENV });
      ({ who, cat } = await seedTenantWithCatalog(seeder));
      await createHook(seeder, who, { url: `${rx.base}/rolling?c=\${conversionId}` });
      await seeder.close();
    });

    afterAll(async () => {
      await Promise.all(nodes.map((node) => node.kill()));
      await db?.close();
      await schema?.drop();
      await rx?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it("loses, doubles and refuses nothing while each node is restarted in turn", async () => {
      const began = Date.now();
      const url = new URL(postgresUrl());
      url.searchParams.set("options", `-c search_path=${schema.schema},public`);
      const env = {
        DATABASE_URL: url.toString(),
        HOST: "127.0.0.1",
        SEED_DEMO: "false",
        JWT_SECRET,
        SECRETS_KEY: POSTGRES_NODE_SECRETS.SECRETS_KEY,
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        // The test sends more than a person would; rate limits are not what it measures.
        RATE_LIMIT_PER_MINUTE: "1000000",
        CLICK_RATE_PER_IP_PER_MINUTE: "1000000000",
      };
      const ports = [await freePort(), await freePort()];
      // Each node its own data directory, kept across its restarts, as each would have its own disk.
      const own = (name: string) => ({ ...env, DATA_DIR: join(dataDir, name) });
      const apis = ports.map((port, i) => new RollingNode(`api ${i + 1}`, "api", own(`api${i + 1}`), port));
      const worker = new RollingNode("worker", "worker", { ...own("worker"), PORT: "1" });
      nodes.push(...apis, worker);
      await Promise.all(nodes.map((node) => node.start()));

      const lb = new RoundRobin(ports);
      const sent: Sent = { clicks: [], conversions: [], unexpected: [] };
      let sequence = 0;
      let loading = true;
      const unexpected = (answer: Answer, path: string) =>
        sent.unexpected.push({ status: answer.status, path, node: answer.node, body: answer.body.slice(0, 300) });

      const sender = async () => {
        while (loading) {
          const n = ++sequence;
          const go = `/go/${cat.linkId}/${cat.trafficSourceId}?sub1=s${n}`;
          const click = await lb.send({ method: "GET", path: go, headers: { "user-agent": BROWSER } });
          const clickId = click.status === 302 ? new URL(String(click.headers.location)).searchParams.get("cid") : null;
          if (!clickId) {
            unexpected(click, go);
            continue;
          }
          sent.clicks.push(clickId);
          // Half the conversions by API, half by postback; the externalId makes a resend harmless.
          const externalId = `rolling-${n}`;
          const via = n % 2 === 0 ? "api" : "postback";
          const answer =
            via === "api"
              ? await lb.send({
                  method: "POST",
                  path: "/api/v1/conversions",
                  headers: { authorization: who.apiKey, "content-type": "application/json" },
                  body: JSON.stringify({ type: "Signup", clickId, externalId }),
                })
              : await lb.send({
                  method: "GET",
                  path: `/postback/${who.postbackKey}?clickId=${clickId}&type=Signup&externalId=${externalId}`,
                });
          if (answer.status !== 201) unexpected(answer, via);
          else {
            const body = JSON.parse(answer.body) as {
              data?: { id: string; attributed: boolean };
              conversionId?: string;
              attributed?: boolean;
            };
            const id = via === "api" ? body.data?.id : body.conversionId;
            const attributed = (via === "api" ? body.data?.attributed : body.attributed) === true;
            if (id) sent.conversions.push({ externalId, id, via, attributed });
            else unexpected(answer, via);
          }
          await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        }
      };
      const senders = Array.from({ length: SENDERS }, () => sender());

      const restarts: { node: string; exit: number | string | null; stopMs: number; startMs: number }[] = [];
      /** Clicks acknowledged while a step's nodes were down or starting: the other node served. */
      const clicksDuringRestart: number[] = [];
      try {
        await pause(SETTLE_MS);
        // The API nodes one after the other (one always serves); the worker beside the first.
        const restart = async (node: RollingNode) => {
          const stopped = await node.stop();
          const restarting = Date.now();
          await node.start();
          restarts.push({ node: node.name, exit: stopped.exit, stopMs: stopped.ms, startMs: Date.now() - restarting });
          expect(stopped.exit, `${node.name} did not stop cleanly:\n${stopped.output}`).toBe(0);
        };
        for (const step of [[apis[0], worker], [apis[1]]]) {
          const before = sent.clicks.length;
          await Promise.all(step.map((node) => node && restart(node)));
          clicksDuringRestart.push(sent.clicks.length - before);
          await pause(SETTLE_MS);
        }
      } finally {
        loading = false;
        await Promise.allSettled(senders);
      }
      await Promise.all(senders);
      const loadMs = Date.now() - began;

      // Every node flushes its clicks within a fraction of a second.
      const storedClicks = async () =>
        Number(
          (await db.query<{ n: string }>("select count(*) as n from clicks where tenant_id = $1", [who.tenantId]))[0]
            ?.n,
        );
      const clickDeadline = Date.now() + 10_000;
      while ((await storedClicks()) < sent.clicks.length && Date.now() < clickDeadline) await pause(200);

      const clickRows = await db.query<{ id: string }>("select id from clicks where tenant_id = $1", [who.tenantId]);
      const conversionRows = await db.query<{ id: string; external_id: string }>(
        "select id, external_id from conversions where tenant_id = $1",
        [who.tenantId],
      );

      // Deliveries finish: every event Delivered, with a deadline well under a delivery lease.
      const deliveryBegan = Date.now();
      const waiting = async () =>
        Number(
          (
            await db.query<{ n: string }>(
              "select count(*) as n from webhook_events where tenant_id = $1 and status <> 'Delivered'",
              [who.tenantId],
            )
          )[0]?.n,
        );
      while ((await waiting()) > 0 && Date.now() - deliveryBegan < 20_000) await pause(200);
      const deliveryMs = Date.now() - deliveryBegan;
      const delivered = new Set(rx.at("/rolling").map((r) => r.query.get("c")));

      const summary = {
        loadMs,
        totalMs: Date.now() - began,
        deliveryMs,
        restarts,
        clicksDuringRestart,
        clicks: { acknowledged: sent.clicks.length, stored: clickRows.length },
        conversions: {
          acknowledged: sent.conversions.length,
          stored: conversionRows.length,
          attributed: sent.conversions.filter((c) => c.attributed).length,
        },
        postbacks: { requests: rx.at("/rolling").length, distinct: delivered.size },
        answeredByNode: lb.answered,
        refused: lb.refused,
        closedIdle: lb.closedIdle,
        closedNew: lb.closedNew,
        unexpected: sent.unexpected.length,
      };
      console.log(`rolling restart: ${JSON.stringify(summary)}`);
      lb.close();

      // No 5xx, nor any other answer than 302 and 201 (a duplicate would mean a lost answer).
      expect(sent.unexpected).toEqual([]);
      for (const restart of restarts) expect(restart.exit).toBe(0);
      // Both nodes carried traffic, and there was real load around each restart.
      for (const count of lb.answered) expect(count).toBeGreaterThan(100);
      for (const count of clicksDuringRestart) expect(count).toBeGreaterThan(10);

      // Every acknowledged click stored once, and nothing stored that was not acknowledged (a
      // request the balancer sent again had not been taken).
      expect(new Set(sent.clicks).size).toBe(sent.clicks.length);
      expect(clickRows.map((r) => r.id).sort()).toEqual([...sent.clicks].sort());

      // Every acknowledged conversion stored once under its externalId, with the id answered.
      const storedByExternal = new Map(conversionRows.map((r) => [r.external_id, r.id]));
      expect(conversionRows).toHaveLength(sent.conversions.length);
      for (const c of sent.conversions) expect(storedByExternal.get(c.externalId), c.externalId).toBe(c.id);

      // Every conversion's postback reached the receiver, in time.
      expect(await waiting()).toBe(0);
      const missing = sent.conversions.filter((c) => !delivered.has(c.id)).map((c) => c.id);
      expect(missing).toEqual([]);
    }, 240_000);
  },
);
