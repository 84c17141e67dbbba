import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { listenMetrics } from "../src/platform/metrics.js";
import { ADMIN_KEY, HEALTH_KEY, startTestApp, type TestApp } from "./helpers/app.js";

const METRICS_KEY = "metrics-key-0123456789abcdef";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const metrics = (app: TestApp, headers: Record<string, string> = {}) =>
  app.call({ method: "GET", url: "/metrics", headers });

describe("/metrics on the main port, by default behind the health key", () => {
  it("refuses a caller without the key, in plain text that names what to send", async () => {
    for (const headers of [
      {},
      { authorization: `Bearer ${HEALTH_KEY}x` },
      { "x-health-key": "wrong-health-key" },
      { authorization: HEALTH_KEY },
      { authorization: `ApiKey ${HEALTH_KEY}` },
    ]) {
      const res = await metrics(t, headers);
      expect(res.statusCode).toBe(401);
      expect(res.headers["content-type"]).toMatch(/^text\/plain/);
      expect(res.body).toBe("Metrics need the health key: send 'Authorization: Bearer <HEALTH_KEY>' or X-Health-Key");
    }
  });

  it("serves the metrics to the health key, as a bearer or in X-Health-Key", async () => {
    await t.call({ method: "GET", url: "/api/health" });
    for (const headers of [{ authorization: `Bearer ${HEALTH_KEY}` }, { "x-health-key": HEALTH_KEY }]) {
      const res = await metrics(t, headers);
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0.0.4/);
      expect(res.body).toMatch(/http_requests_total\{method="GET",route="\/api\/health",status="200"\} \d+/);
    }
  });

  it("counts wrong health keys against the same per-address budget as the detailed health", async () => {
    const guarded = await startTestApp({ env: { HEALTH_KEY_FAILURES_PER_MINUTE: "3" }, testDb: t.testDb });
    try {
      for (let guess = 0; guess < 3; guess += 1) {
        expect((await metrics(guarded, { "x-health-key": `wrong-${guess}` })).statusCode).toBe(401);
      }
      // The budget is spent on /metrics: the detailed health refuses this address too, right key included.
      const detailed = await guarded.call({
        method: "GET",
        url: "/api/health/detailed",
        headers: { "x-health-key": HEALTH_KEY },
      });
      expect(detailed.statusCode).toBe(429);
      expect((await metrics(guarded, { "x-health-key": HEALTH_KEY })).statusCode).toBe(429);
    } finally {
      await guarded.close();
    }
  });

  it("is off (404) when the deployment has neither a metrics key nor a health key", async () => {
    const bare = await startTestApp({ env: { HEALTH_KEY: "" }, testDb: t.testDb });
    try {
      expect(bare.ctx.config.healthKey).toBeUndefined();
      for (const headers of [{}, { authorization: `Bearer ${HEALTH_KEY}` }]) {
        expect((await metrics(bare, headers)).statusCode).toBe(404);
      }
    } finally {
      await bare.close();
    }
  });

  it("takes METRICS_KEY as a bearer instead of the health key once it is set", async () => {
    const keyed = await startTestApp({ env: { METRICS_KEY }, testDb: t.testDb });
    try {
      expect((await metrics(keyed, { authorization: `Bearer ${METRICS_KEY}` })).statusCode).toBe(200);
      for (const headers of [
        {},
        { authorization: `Bearer ${HEALTH_KEY}` },
        { "x-health-key": HEALTH_KEY },
        { "x-health-key": METRICS_KEY },
      ]) {
        const res = await metrics(keyed, headers);
        expect(res.statusCode).toBe(401);
        expect(res.body).toBe("Metrics need 'Authorization: Bearer <METRICS_KEY>'");
      }
    } finally {
      await keyed.close();
    }
  });
});

describe("/metrics on a separate listener (METRICS_PORT)", () => {
  async function separate(env: Record<string, string>) {
    const app = await startTestApp({ env: { METRICS_PORT: "0", ...env }, testDb: t.testDb });
    const { metricsPort, metricsKey, healthKey } = app.ctx.config;
    expect(metricsPort).toBe(0);
    const server = await listenMetrics(app.app, { port: 0, key: metricsKey, healthKey }, "127.0.0.1");
    const { port } = server.server.address() as AddressInfo;
    return { app, server, url: `http://127.0.0.1:${port}/metrics` };
  }
  async function stop(parts: { app: TestApp; server: FastifyInstance }) {
    await parts.server.close();
    await parts.app.close();
  }

  it("leaves the main port without /metrics and serves the main app's metrics over real HTTP", async () => {
    const parts = await separate({});
    try {
      // Not on the main port, whatever key is sent.
      expect((await metrics(parts.app, { authorization: `Bearer ${HEALTH_KEY}` })).statusCode).toBe(404);
      await parts.app.call({ method: "GET", url: "/active-version" });
      const res = await fetch(parts.url);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/http_requests_total\{method="GET",route="\/active-version",status="200"\} \d+/);
      expect((await fetch(parts.url.replace("/metrics", "/api/health"))).status).toBe(404);
    } finally {
      await stop(parts);
    }
  });

  it("requires METRICS_KEY there too when it is set", async () => {
    const parts = await separate({ METRICS_KEY });
    try {
      const refused = await fetch(parts.url);
      expect(refused.status).toBe(401);
      expect(await refused.text()).toBe("Metrics need 'Authorization: Bearer <METRICS_KEY>'");
      expect((await fetch(parts.url, { headers: { authorization: `Bearer ${HEALTH_KEY}` } })).status).toBe(401);
      expect((await fetch(parts.url, { headers: { authorization: `Bearer ${METRICS_KEY}` } })).status).toBe(200);
    } finally {
      await stop(parts);
    }
  });

  it("stops the start on a bad METRICS_PORT or a short METRICS_KEY, naming the variable", () => {
    expect(() => loadConfig({ METRICS_PORT: "70000" })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_PORT: "metrics" })).toThrow(/METRICS_PORT must be a whole number/);
    expect(() => loadConfig({ METRICS_KEY: "short" })).toThrow(/METRICS_KEY must be at least 16 characters/);
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: "9464" }).metricsPort).toBe(9464);
  });
});

describe("the admin OpenAPI document", () => {
  it("needs the admin key, with the admin routes' 401 envelope", async () => {
    for (const headers of [
      {},
      { authorization: `Bearer ${ADMIN_KEY}x` },
      { authorization: ADMIN_KEY },
      { authorization: `Bearer ${HEALTH_KEY}` },
    ]) {
      const res = await t.call({ method: "GET", url: "/api/swagger/admin/swagger.json", headers });
      expect(res.statusCode).toBe(401);
      const admin = await t.call({ method: "GET", url: "/api/admin/tenants", headers });
      expect(res.json()).toEqual(admin.json());
      expect(res.json()).toEqual({
        code: "unauthorized",
        message: "Admin credential missing or wrong; send 'Authorization: Bearer <ADMIN_API_KEY>'",
        data: null,
      });
    }
    const res = await t.call({
      method: "GET",
      url: "/api/swagger/admin/swagger.json",
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(res.statusCode).toBe(200);
    const document = JSON.parse(res.body) as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths)).toContain("/api/admin/tenants");
  });
});
