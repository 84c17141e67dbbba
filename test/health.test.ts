import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR_MS } from "../src/platform/durations.js";
import { HEARTBEAT_STALE_MS, startHeartbeat } from "../src/platform/heartbeat.js";
import { newId } from "../src/platform/ids.js";
import { HEALTH_KEY, startTestApp, type TestApp } from "./helpers/app.js";

const COMPONENTS = ["api", "database", "queue", "search"] as const;
const TRIGRAM_INDEX = "users_name_trgm";
const CREATE_TRIGRAM_INDEX = `create index ${TRIGRAM_INDEX} on users using gin (lower(name) public.gin_trgm_ops)`;

interface Check {
  name: string;
  component: string;
  status: string;
  durationMs: number;
  error: string | null;
}

async function health(t: TestApp) {
  return t.call({ method: "GET", url: "/api/health" });
}

async function detailed(t: TestApp) {
  const res = await t.call({ method: "GET", url: "/api/health/detailed", headers: { "x-health-key": HEALTH_KEY } });
  return { res, checks: res.json().data.checks as Check[] };
}

/** Both background roles alive (as a worker and a scheduler node would be), for the test's length. */
async function withHeartbeat<T>(t: TestApp, fn: () => Promise<T>): Promise<T> {
  const heartbeat = await startHeartbeat({
    db: t.ctx.db,
    clock: t.clock,
    nodeId: t.ctx.nodeId,
    roles: ["worker", "scheduler"],
    log: t.app.log,
  });
  try {
    return await fn();
  } finally {
    await heartbeat.stop();
  }
}

async function insertRun(t: TestApp, job: string, startedAt: Date): Promise<string> {
  const id = newId("run");
  await t.ctx.db.query(
    "insert into job_runs (id, job, slot, manual, node_id, started_at) values ($1, $2, $3, false, 'node_dead', $4)",
    [id, job, startedAt.toISOString(), startedAt],
  );
  return id;
}

describe("/api/health", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("needs no credential and answers the envelope with four components and checkedAt", async () => {
    const res = await health(t);
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toContain("application/json");
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(["code", "data", "message"]);
    expect(body.code).toBe("ok");
    expect(Object.keys(body.data).sort()).toEqual(["checkedAt", "components", "status"]);
    expect(Object.keys(body.data.components).sort()).toEqual([...COMPONENTS].sort());
    for (const component of COMPONENTS) {
      expect(Object.keys(body.data.components[component])).toEqual(["status"]);
      expect(["healthy", "degraded", "unhealthy"]).toContain(body.data.components[component].status);
    }
    expect(body.data.checkedAt).toBe(t.clock.now().toISOString());
  });

  it("ignores a credential it does not need, even a bad one", async () => {
    const res = await t.call({ method: "GET", url: "/api/health", headers: { authorization: "ApiKey nonsense" } });
    expect(res.statusCode).toBe(200);
  });

  it("without worker or scheduler heartbeats the queue is degraded, the service degraded with 200", async () => {
    const res = await health(t);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      code: "ok",
      message: "Degraded",
      data: {
        status: "degraded",
        components: {
          api: { status: "healthy" },
          database: { status: "healthy" },
          queue: { status: "degraded" },
          search: { status: "healthy" },
        },
      },
    });
    const { checks } = await detailed(t);
    for (const role of ["worker", "scheduler"]) {
      const check = checks.find((c) => c.name === `${role}-heartbeat`);
      expect(check).toMatchObject({ component: "queue", status: "degraded" });
      expect(check?.error).toContain(role);
    }
  });

  it("with both roles beating and no stuck runs, everything is healthy", async () => {
    await withHeartbeat(t, async () => {
      const res = await health(t);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        code: "ok",
        message: "Healthy",
        data: {
          status: "healthy",
          components: {
            api: { status: "healthy" },
            database: { status: "healthy" },
            queue: { status: "healthy" },
            search: { status: "healthy" },
          },
        },
      });
    });
    // Stopping the heartbeat leaves at once: the queue is degraded again without waiting.
    expect((await health(t)).json().data.components.queue.status).toBe("degraded");
  });

  it("a heartbeat older than the stale limit no longer counts", async () => {
    await withHeartbeat(t, async () => {
      const start = t.clock.now();
      try {
        t.clock.advance(HEARTBEAT_STALE_MS - 1000);
        expect((await health(t)).json().data.components.queue.status).toBe("healthy");
        t.clock.advance(2000);
        expect((await health(t)).json().data.components.queue.status).toBe("degraded");
        const { checks } = await detailed(t);
        expect(checks.find((c) => c.name === "worker-heartbeat")?.error).toContain("heartbeat");
      } finally {
        t.clock.set(start);
      }
    });
  });

  it("a job run unfinished for over an hour degrades the queue and the detailed check names the job", async () => {
    await withHeartbeat(t, async () => {
      const recent = await insertRun(t, "recent-job", new Date(t.clock.now().getTime() - 30 * 60 * 1000));
      try {
        // Half an hour is a long run, not a stuck one.
        expect((await health(t)).json().data.components.queue.status).toBe("healthy");

        const stuck = await insertRun(t, "stuck-job", new Date(t.clock.now().getTime() - 2 * HOUR_MS));
        try {
          const res = await health(t);
          expect(res.statusCode).toBe(200);
          expect(res.json().data).toMatchObject({ status: "degraded", components: { queue: { status: "degraded" } } });

          const { res: full, checks } = await detailed(t);
          expect(full.statusCode).toBe(200);
          const backlog = checks.find((c) => c.name === "backlog");
          expect(backlog).toMatchObject({ component: "queue", status: "degraded" });
          expect(backlog?.error).toContain("stuck-job");
          expect(backlog?.error).not.toContain("recent-job");

          // Once the run finishes, the queue is healthy again.
          await t.ctx.db.query("update job_runs set finished_at = $2 where id = $1", [stuck, t.clock.now()]);
          expect((await health(t)).json().data.components.queue.status).toBe("healthy");
        } finally {
          await t.ctx.db.query("delete from job_runs where id = $1", [stuck]);
        }
      } finally {
        await t.ctx.db.query("delete from job_runs where id = $1", [recent]);
      }
    });
  });

  it("a missing trigram index degrades search with 200 and the detailed check names the index", async () => {
    await withHeartbeat(t, async () => {
      await t.ctx.db.query(`drop index ${TRIGRAM_INDEX}`);
      try {
        const res = await health(t);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({
          code: "ok",
          data: {
            status: "degraded",
            components: {
              api: { status: "healthy" },
              database: { status: "healthy" },
              queue: { status: "healthy" },
              search: { status: "degraded" },
            },
          },
        });
        const { res: full, checks } = await detailed(t);
        expect(full.statusCode).toBe(200);
        const trigram = checks.find((c) => c.component === "search");
        expect(trigram?.status).toBe("degraded");
        expect(trigram?.error).toContain(TRIGRAM_INDEX);
        expect(trigram?.error).not.toContain("tenants_name_trgm");
      } finally {
        await t.ctx.db.query(CREATE_TRIGRAM_INDEX);
      }
      expect((await health(t)).json().data.components.search.status).toBe("healthy");
    });
  });

  it("reports afresh on each call when the cache is off: checkedAt follows the clock", async () => {
    const first = (await health(t)).json().data.checkedAt;
    t.clock.advance(1000);
    const second = (await health(t)).json().data.checkedAt;
    expect(second).not.toBe(first);
    expect(second).toBe(t.clock.now().toISOString());
  });
});

describe("/api/health/detailed", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("refuses a missing or wrong X-Health-Key with 401 in the envelope", async () => {
    for (const headers of [
      {},
      { "x-health-key": "wrong-key" },
      { "x-health-key": "" },
      { authorization: HEALTH_KEY },
    ]) {
      const res = await t.call({ method: "GET", url: "/api/health/detailed", headers });
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.json()).toMatchObject({ code: "unauthorized", data: null });
      expect(res.json().message).toContain("X-Health-Key");
    }
  });

  it("with the key lists every check with its component, status, duration and error", async () => {
    const { res, checks } = await detailed(t);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.code).toBe("ok");
    expect(Object.keys(body.data).sort()).toEqual(["checkedAt", "checks", "components", "status"]);
    // Features may register more checks; these are the platform's own.
    expect(checks.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        "process",
        "ping",
        "worker-heartbeat",
        "scheduler-heartbeat",
        "backlog",
        "trigram-indexes",
      ]),
    );
    for (const check of checks) {
      expect(Object.keys(check).sort()).toEqual(["component", "durationMs", "error", "name", "status"]);
      expect(COMPONENTS).toContain(check.component);
      expect(typeof check.durationMs).toBe("number");
      expect(check.durationMs).toBeGreaterThanOrEqual(0);
      if (check.status === "healthy") expect(check.error).toBeNull();
      else expect(typeof check.error).toBe("string");
    }
    // Each component is as bad as its worst check.
    for (const component of COMPONENTS) {
      const statuses = checks.filter((c) => c.component === component).map((c) => c.status);
      expect(statuses.length).toBeGreaterThan(0);
      const expected = statuses.includes("unhealthy")
        ? "unhealthy"
        : statuses.includes("degraded")
          ? "degraded"
          : "healthy";
      expect(body.data.components[component].status).toBe(expected);
    }
  });

  it("answers 404 in the envelope when the deployment has no health key", async () => {
    const noKey = await startTestApp({ env: { HEALTH_KEY: "" } });
    try {
      expect(noKey.ctx.config.healthKey).toBeUndefined();
      for (const headers of [{}, { "x-health-key": HEALTH_KEY }, { "x-health-key": "" }]) {
        const res = await noKey.call({ method: "GET", url: "/api/health/detailed", headers });
        expect(res.statusCode).toBe(404);
        expect(res.json()).toMatchObject({ code: "not_found", data: null });
      }
      // The summary needs no key and stays available.
      expect((await health(noKey)).statusCode).toBe(200);
    } finally {
      await noKey.close();
    }
  });
});

describe("health with the database down", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  // close() closes the database again: that must be harmless.
  afterAll(() => t.close());

  it("a closed database is unhealthy: 503 service_unavailable, the other components still reported", async () => {
    expect((await health(t)).statusCode).toBe(200);
    await t.testDb.db.close();
    expect(t.ctx.db.closed).toBe(true);

    const res = await health(t);
    expect(res.statusCode).toBe(503);
    const body = res.json();
    expect(body.code).toBe("service_unavailable");
    expect(body.message).toContain("database");
    expect(body.data.status).toBe("unhealthy");
    expect(body.data.components.database.status).toBe("unhealthy");
    expect(body.data.components.api.status).toBe("healthy");
    // Queue and search cannot be checked without the database, but are reported, not dropped.
    for (const component of ["queue", "search"]) {
      expect(["healthy", "degraded"]).toContain(body.data.components[component].status);
    }
    expect(body.data.checkedAt).toBe(t.clock.now().toISOString());

    const full = await t.call({ method: "GET", url: "/api/health/detailed", headers: { "x-health-key": HEALTH_KEY } });
    expect(full.statusCode).toBe(503);
    expect(full.json().code).toBe("service_unavailable");
    const checks = full.json().data.checks as Check[];
    for (const component of COMPONENTS) expect(checks.some((c) => c.component === component)).toBe(true);
    const ping = checks.find((c) => c.name === "ping");
    expect(ping).toMatchObject({ component: "database", status: "unhealthy" });
    expect(ping?.error).toContain("closed");
  });

  it("a closed app takes no more requests", async () => {
    await t.app.close();
    await expect(t.app.inject({ method: "GET", url: "/api/health" })).rejects.toThrow(/closed/);
  });
});

describe("health report cache", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ app: { healthCacheMs: 60_000 } });
  });
  afterAll(() => t.close());

  it("reuses one report within the cache time, even after something broke", async () => {
    const first = (await health(t)).json().data;
    expect(first.components.search.status).toBe("healthy");

    await t.ctx.db.query(`drop index ${TRIGRAM_INDEX}`);
    t.clock.advance(10_000);
    const second = await health(t);
    expect(second.statusCode).toBe(200);
    expect(second.json().data).toEqual(first);

    // The detailed variant shares the cached report.
    const full = await t.call({ method: "GET", url: "/api/health/detailed", headers: { "x-health-key": HEALTH_KEY } });
    expect(full.json().data.checkedAt).toBe(first.checkedAt);
    expect((full.json().data.checks as Check[]).every((c) => c.component !== "search" || c.status === "healthy")).toBe(
      true,
    );
  });
});
