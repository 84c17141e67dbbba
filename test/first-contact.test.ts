import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { removeDemoTenant, ServiceRunningError } from "../src/features/demo/reset.js";
import { DEMO_TENANT, seedDemo } from "../src/features/demo/seed.js";
import { generateTraffic } from "../src/features/demo/traffic.js";
import { escapeMarkdownTags } from "../src/platform/openapi.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { freePort, run, type Started, waitFor } from "./helpers/process.js";
import { createHook, simulate, startWebhookTestApp, WEBHOOKS_API } from "./helpers/webhooks.js";

// Issue 22, "first contact": what a new user meets in the first minutes (the explorer's
// credentials, `npm start` and its banner, a new demo login, clients that always send JSON).

const onPglite = inject("dbKind") === "pglite";

describe("a bare or misplaced API key", () => {
  let t: TestApp;
  let who: Tenancy;
  beforeAll(async () => {
    t = await startTestApp();
    who = await seedTenancy(t);
  });
  afterAll(() => t.close());

  const key = () => who.apiKey.slice("ApiKey ".length);

  it("pasted alone is a 401 saying to use `Authorization: ApiKey <key>`, never repeating it", async () => {
    const res = await t.call({ method: "GET", url: "/api/v1/api-tokens", headers: { authorization: key() } });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toContain("use `Authorization: ApiKey <key>`");
    expect(res.body).not.toContain(key());
    expect(res.body).not.toContain(key().slice(0, 12));
  });

  it("sent as a Bearer token is a 401 pointing to the ApiKey scheme, never repeating it", async () => {
    const res = await t.call({
      method: "GET",
      url: "/api/v1/api-tokens",
      headers: { authorization: `Bearer ${key()}` },
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toContain("an API key is sent as `Authorization: ApiKey <key>`");
    expect(res.body).not.toContain(key().slice(0, 12));
  });

  it("as the explorer sends it, 'ApiKey <key>' in Authorization, works", async () => {
    const res = await t.call({ method: "GET", url: "/api/v1/api-tokens", headers: { authorization: who.apiKey } });
    expect(res.statusCode).toBe(200);
  });
});

describe("the OpenAPI document's descriptions", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("say what to paste for the ApiKey scheme, with no placeholder a Markdown page would swallow", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/api/swagger/v1/swagger.json" })).json();
    const apiKey = doc.components.securitySchemes.ApiKey;
    expect(apiKey).toMatchObject({ type: "apiKey", in: "header", name: "Authorization" });
    expect(apiKey.description).toContain("`ApiKey YOUR_KEY`");
    expect(doc.info.description).toContain("`Authorization: ApiKey YOUR_KEY`");
    // Every description in the document: a `<` that opens a tag outside a code span is escaped.
    const descriptions: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node !== null && typeof node === "object") {
        for (const [k, v] of Object.entries(node)) {
          if (k === "description" && typeof v === "string") descriptions.push(v);
          else walk(v);
        }
      }
    };
    walk(doc);
    expect(descriptions.length).toBeGreaterThan(50);
    const outsideCode = (text: string) => text.split(/`[^`]*`/).join("");
    expect(descriptions.filter((d) => /<[A-Za-z/!?]/.test(outsideCode(d)))).toEqual([]);
  });

  it("escape a tag-like placeholder outside code spans only", () => {
    expect(escapeMarkdownTags("Send as 'Authorization: Bearer <token>'")).toBe(
      "Send as 'Authorization: Bearer &lt;token>'",
    );
    expect(escapeMarkdownTags("`ApiKey <key>` or a < b")).toBe("`ApiKey <key>` or a < b");
  });
});

describe("bodyless requests sent with Content-Type: application/json", () => {
  let t: TestApp;
  let who: Tenancy;
  const json = (authorization: string) => ({ authorization, "content-type": "application/json" });
  beforeAll(async () => {
    t = await startWebhookTestApp();
    who = await seedTenancy(t);
  });
  afterAll(() => t.close());

  it("DELETE /api/v1/api-tokens/{id} with an empty body deletes the key", async () => {
    const other = await t.call({
      method: "POST",
      url: "/api/v1/api-tokens",
      headers: { authorization: who.bearer },
      payload: { name: "To delete" },
    });
    const res = await t.call({
      method: "DELETE",
      url: `/api/v1/api-tokens/${other.json().data.id}`,
      headers: json(who.bearer),
      payload: "",
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it("rotate, resend and simulate with an empty body are answered as without one", async () => {
    const rotate = await t.call({
      method: "POST",
      url: "/api/v1/settings/postback-key",
      headers: json(who.bearer),
      payload: "",
    });
    expect(rotate.statusCode, rotate.body).toBe(201);

    const notification = await t.call({
      method: "POST",
      url: "/api/v1/notifications/webhooks",
      headers: { authorization: who.bearer },
      payload: { url: "http://127.0.0.1:9/ops" },
    });
    expect(notification.statusCode, notification.body).toBe(201);
    const rotateSecret = await t.call({
      method: "POST",
      url: `/api/v1/notifications/webhooks/${notification.json().data.id}/rotate-secret`,
      headers: json(who.bearer),
      payload: "",
    });
    expect(rotateSecret.statusCode, rotateSecret.body).toBe(200);

    const hook = await createHook(t, who.bearer, { url: "http://127.0.0.1:9/hook" });
    const simulated = await simulate(t, who.bearer, hook.id, null);
    expect(simulated.statusCode, simulated.body).toBe(202);
    const withHeader = await t.call({
      method: "POST",
      url: `${WEBHOOKS_API}/settings/${hook.id}/simulate`,
      headers: json(who.bearer),
      payload: "",
    });
    expect(withHeader.statusCode, withHeader.body).toBe(202);

    const resend = await t.call({
      method: "POST",
      url: `${WEBHOOKS_API}/events/${withHeader.json().data.eventId}/resend`,
      headers: json(who.bearer),
      payload: "",
    });
    expect(resend.statusCode, resend.body).toBe(200);
  });

  it("a route that needs a body still says so, and bad JSON is still refused", async () => {
    const missing = await t.call({
      method: "POST",
      url: "/api/v1/api-tokens",
      headers: json(who.bearer),
      payload: "",
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().code).toBe("validation_error");
    const bad = await t.call({ method: "POST", url: "/api/v1/api-tokens", headers: json(who.bearer), payload: "{" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe("Request body is not valid JSON");
    const poisoned = await t.call({
      method: "POST",
      url: "/api/v1/api-tokens",
      headers: json(who.bearer),
      payload: '{"name":"x","__proto__":{"admin":true}}',
    });
    expect(poisoned.statusCode).toBe(400);
  });
});

describe("removing the demo tenant (npm run demo:reset)", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const demoRows = async (tenantId: string) => {
    const tables = await t.ctx.db.query<{ table_name: string }>(
      `select table_name from information_schema.columns
        where table_schema = current_schema() and column_name = 'tenant_id'`,
    );
    let total = 0;
    for (const { table_name } of tables) {
      const [row] = await t.ctx.db.query<{ n: number }>(
        `select count(*)::int as n from "${table_name}" where tenant_id = $1`,
        [tenantId],
      );
      total += row?.n ?? 0;
    }
    return total;
  };

  it("removes the demo tenant with all its rows, leaves other tenants alone, and the next seed is new", async () => {
    const other = await seedTenancy(t);
    const demo = await seedDemo(t.ctx);
    if (!demo) throw new Error("the demo tenant was already there");
    await generateTraffic(t.ctx.db, demo.tenantId, { days: 3, clicks: 300, now: t.clock.now() });
    expect(await demoRows(demo.tenantId)).toBeGreaterThan(300);
    const otherBefore = await demoRows(other.tenantId);

    const removed = await removeDemoTenant(t.ctx.db, t.clock.now());
    expect(removed.tenantId).toBe(demo.tenantId);
    expect(await demoRows(demo.tenantId)).toBe(0);
    expect(await t.ctx.db.query("select 1 from tenants where name = $1", [DEMO_TENANT])).toEqual([]);
    expect(await demoRows(other.tenantId)).toBe(otherBefore);
    const stillSignsIn = await t.call({
      method: "POST",
      url: "/api/v1/auth",
      payload: { email: other.email, password: other.password },
    });
    expect(stillSignsIn.statusCode).toBe(200);

    expect((await removeDemoTenant(t.ctx.db, t.clock.now())).tenantId).toBeNull();
    const again = await seedDemo(t.ctx);
    expect(again?.password).toBeDefined();
    expect(again?.password).not.toBe(demo.password);
    const signIn = await t.call({
      method: "POST",
      url: "/api/v1/auth",
      payload: { email: again?.email, password: again?.password },
    });
    expect(signIn.statusCode).toBe(200);
  });

  it("refuses while a worker or scheduler beats on the database, removing nothing", async () => {
    await seedDemo(t.ctx);
    const now = t.clock.now();
    await t.ctx.db.query(
      "insert into node_heartbeats (node_id, role, started_at, last_seen_at) values ('node_live', 'worker', $1, $1)",
      [now],
    );
    try {
      await expect(removeDemoTenant(t.ctx.db, now)).rejects.toBeInstanceOf(ServiceRunningError);
      expect(await t.ctx.db.query("select 1 from tenants where name = $1", [DEMO_TENANT])).toHaveLength(1);
    } finally {
      await t.ctx.db.query("delete from node_heartbeats where node_id = 'node_live'");
    }
  });
});

// ---- The real `npm start`, as a user runs it -------------------------------------------------

/** `npm <args>` in this checkout, in a process group of its own (as a terminal would run it). */
function npm(args: string[], env: Record<string, string>): Started {
  return run("npm", args, {
    cwd: process.cwd(),
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? tmpdir(),
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      ...env,
    },
    detached: true,
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves with the run's exit, or with "still running" after the timeout. */
const exitWithin = (run: Started, ms: number) =>
  Promise.race([run.exited, new Promise<string>((resolve) => setTimeout(() => resolve("still running"), ms))]);

describe.runIf(onPglite)("npm start, as a new user meets it", () => {
  let dataDir: string;
  let port: number;
  let env: Record<string, string>;
  const runs: Started[] = [];
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "tp-first-contact-"));
    port = await freePort();
    env = { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "info" };
  });
  afterAll(async () => {
    // Whatever a failed assertion left running: its whole process group.
    for (const run of runs) {
      if (run.child.exitCode === null && run.child.pid !== undefined) {
        try {
          process.kill(-run.child.pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  const base = () => `http://127.0.0.1:${port}`;
  const signIn = (email: string | undefined, password: string | undefined) =>
    fetch(`${base()}/api/v1/auth`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    });

  it("opens the port ready to answer, prints the banner after, stops on SIGTERM to npm; demo:reset gives a new login", {
    timeout: 300_000,
  }, async () => {
    const first = npm(["start"], env);
    runs.push(first);
    // The port opens only when the service can answer: the first health request is answered at once.
    const started = Date.now();
    while (!(await portOpen(port))) {
      if (first.child.exitCode !== null || Date.now() - started > 180_000) throw new Error(first.output());
      // The banner says the service is there: never before it is.
      expect(first.output()).not.toContain("running roles:");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // ... and stays so: until the banner is out (the old start seeded its demo traffic in that
    // window, and a request then hung for seconds), every health request is answered at once.
    const latencies: number[] = [];
    const opened = Date.now();
    do {
      const asked = Date.now();
      const health = await fetch(`${base()}/api/health`, { signal: AbortSignal.timeout(30_000) });
      // Health is cached for a few seconds; an unknown key is looked up in the database each time.
      const unknownKey = await fetch(`${base()}/api/v1/api-tokens`, {
        headers: { authorization: `ApiKey ${randomBytes(32).toString("base64")}` },
        signal: AbortSignal.timeout(30_000),
      });
      latencies.push(Date.now() - asked);
      expect(health.status).toBe(200);
      expect(unknownKey.status).toBe(401);
    } while (!/Stop with Ctrl-C/.test(first.output()) && Date.now() - opened < 60_000);
    console.log(
      `port open ${opened - started} ms after npm start; health answered in ${latencies.join(", ")} ms until the banner`,
    );
    expect(Math.max(...latencies)).toBeLessThan(2_000);

    // The banner: after the listen log line, set apart by a blank line and rules, explaining the keys.
    await waitFor(first, /Demo traffic:.*\n(.*\n)*={20,}\n/, 120_000);
    const text = first.output();
    const bannerAt = text.indexOf("\n\n====");
    expect(text.indexOf("Server listening")).toBeGreaterThan(-1);
    expect(bannerAt, text).toBeGreaterThan(text.indexOf("Server listening"));
    const banner = text.slice(bannerAt);
    expect(banner).toMatch(/running roles: api, worker, scheduler on embedded PGlite/);
    expect(banner).toContain("Legacy key:");
    expect(banner).toContain("a key without scopes, as keys made before scopes existed");
    expect(banner).toContain("npm run demo:reset");
    const login = banner.match(/Demo login:\s+(\S+) \/ (\S+)/);
    expect((await signIn(login?.[1], login?.[2])).status).toBe(200);

    // While the service runs, demo:reset refuses (the data directory's lock) and removes nothing.
    const refused = npm(["run", "demo:reset"], env);
    runs.push(refused);
    expect(await refused.exited, refused.output()).toBe(1);
    expect(refused.output()).toContain("Nothing removed");
    expect(refused.output()).toMatch(/in use by another process \(pid \d+\)/);

    // SIGTERM to the npm process (what the user started) stops the server itself, gracefully.
    const serverPid = Number.parseInt(readFileSync(join(dataDir, "pglite.lock"), "utf8"), 10);
    expect(alive(serverPid)).toBe(true);
    first.child.kill("SIGTERM");
    expect(await exitWithin(first, 30_000), first.output()).toBe(0);
    expect(first.output()).toMatch(/"msg":"stopped"/);
    expect(alive(serverPid)).toBe(false);
    expect(await portOpen(port)).toBe(false);
    expect(existsSync(join(dataDir, "pglite.lock"))).toBe(false);

    // With the service stopped, demo:reset removes the demo tenant; the next start seeds a new one.
    const reset = npm(["run", "demo:reset"], env);
    runs.push(reset);
    expect(await reset.exited, reset.output()).toBe(0);
    expect(reset.output()).toMatch(/Demo tenant \S+ removed/);

    const second = npm(["start"], env);
    runs.push(second);
    await waitFor(second, /Demo traffic:.*\n(.*\n)*={20,}\n/, 120_000);
    const again = second.output().match(/Demo login:\s+(\S+) \/ (\S+)/);
    expect(again?.[2]).not.toBe(login?.[2]);
    expect((await signIn(again?.[1], again?.[2])).status).toBe(200);
    expect((await signIn(login?.[1], login?.[2])).status).toBe(401);

    // Ctrl-C in a terminal: SIGINT to the whole process group (npm forwards it once more).
    const secondPid = Number.parseInt(readFileSync(join(dataDir, "pglite.lock"), "utf8"), 10);
    if (second.child.pid === undefined) throw new Error("npm has no pid");
    process.kill(-second.child.pid, "SIGINT");
    expect(await exitWithin(second, 30_000), second.output()).not.toBe("still running");
    expect(second.output()).toMatch(/"msg":"stopped"/);
    expect(second.output()).not.toContain("shutdown took too long");
    expect(alive(secondPid)).toBe(false);
    expect(await portOpen(port)).toBe(false);
  });
});
