import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createPostgresSchema, postgresUrl } from "./helpers/db.js";
import { freePort, POSTGRES_NODE_SECRETS, start, waitFor } from "./helpers/process.js";

// The real entry point, as `npm start` runs it: roles, printed addresses, demo seed, SIGTERM.

const onPglite = inject("dbKind") === "pglite";

describe("the service process", () => {
  let dataDir: string;
  let port: number;
  let env: Record<string, string>;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "tp-process-"));
    port = await freePort();
    env = { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1" };
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it.runIf(onPglite)(
    "starts every role on the embedded database, seeds and prints the demo once, stops cleanly on SIGTERM",
    async () => {
      const first = start([], env);
      try {
        await waitFor(first, /Demo API key:\s+(\S+)/);
        const text = first.output();
        expect(text).toContain("running roles: api, worker, scheduler on embedded PGlite");
        expect(text).toContain(`API explorer:  http://localhost:${port}/api/swagger`);
        const login = text.match(/Demo login:\s+(\S+) \/ (\S+)/);
        const key = text.match(/Demo API key:\s+(\S+)/)?.[1];
        const base = `http://127.0.0.1:${port}`;
        const auth = await fetch(`${base}/api/v1/auth`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: login?.[1], password: login?.[2] }),
        });
        expect(auth.status).toBe(200);
        const scopes = await fetch(`${base}/api/v1/api-tokens/scopes`, { headers: { authorization: `ApiKey ${key}` } });
        expect(scopes.status).toBe(200);
        // Worker and scheduler in this process keep the queue component healthy.
        const health = (await (await fetch(`${base}/api/health`)).json()) as { data: { status: string } };
        expect(health.data.status).toBe("healthy");
      } finally {
        first.child.kill("SIGTERM");
      }
      expect(await first.exited, first.output()).toBe(0);

      // A clean stop leaves the embedded database reusable; the demo secrets are not printed again.
      const second = start([], env);
      try {
        await waitFor(second, /Demo tenant already exists/);
        expect(second.output()).not.toContain("Demo API key:");
      } finally {
        second.child.kill("SIGTERM");
      }
      expect(await second.exited, second.output()).toBe(0);
    },
    120_000,
  );

  it.runIf(onPglite)(
    "runs a single role without listening when it is not api",
    async () => {
      const worker = start(["--role", "worker"], { ...env, SEED_DEMO: "false" });
      try {
        await waitFor(worker, /running roles: worker/);
        await expect(fetch(`http://127.0.0.1:${port}/api/health`)).rejects.toThrow();
      } finally {
        worker.child.kill("SIGTERM");
      }
      expect(await worker.exited).toBe(0);
    },
    60_000,
  );

  it.runIf(!onPglite)(
    "runs api, worker and scheduler as separate processes on one PostgreSQL",
    async () => {
      const { schema, drop } = await createPostgresSchema();
      const url = new URL(postgresUrl());
      url.searchParams.set("options", `-c search_path=${schema},public`);
      const shared = { ...env, ...POSTGRES_NODE_SECRETS, DATABASE_URL: url.toString() };
      const api = start(["--role", "api"], shared);
      const background = start(["--role=worker,scheduler"], { ...shared, PORT: "1" });
      try {
        await waitFor(api, /running roles: api on PostgreSQL/);
        await waitFor(background, /running roles: worker, scheduler on PostgreSQL/);
        const health = (await (await fetch(`http://127.0.0.1:${port}/api/health`)).json()) as {
          data: { status: string; components: { queue: { status: string } } };
        };
        // The api node sees the other process's heartbeats through the shared database.
        expect(health.data.components.queue.status).toBe("healthy");
      } finally {
        api.child.kill("SIGTERM");
        background.child.kill("SIGTERM");
        expect(await api.exited).toBe(0);
        expect(await background.exited).toBe(0);
        await drop();
      }
    },
    90_000,
  );

  it.runIf(onPglite).each([
    [["--role", "painter"], {}, "Unknown role 'painter'"],
    [[], { PORT: "eighty" }, "Invalid configuration: PORT must be a whole number"],
    [[], { DATABASE_URL: "mysql://x" }, "Invalid configuration: DATABASE_URL"],
  ])(
    "refuses to start with %j %j, naming the problem",
    async (args, extra, message) => {
      const bad = start(args, { ...env, ...extra });
      expect(await bad.exited).toBe(1);
      expect(bad.output()).toContain(message);
    },
    60_000,
  );
});
