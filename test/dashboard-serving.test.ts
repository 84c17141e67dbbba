import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DASHBOARD_CSP, dashboardRoutes } from "../src/features/dashboard/routes.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

// The dashboard's files as the service serves them (web/dist, built by the global setup):
// the page for client routes, hashed assets cached for a year and sent compressed, a CSP on the
// page, and the service's own paths answering exactly as they did before the dashboard.
const DIST = join(import.meta.dirname, "..", "web", "dist");
const assets = readdirSync(join(DIST, "assets"));
const mainScript = assets.find((f) => /^index-.*\.js$/.test(f));

describe("dashboard assets", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(["/", "/sign-in", "/issues/iss_1", "/some/client/route?from=2026-01-01"])(
    "answers the page at %s, never cached, with the content security policy",
    async (url) => {
      const res = await t.call({ method: "GET", url });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
      expect(res.body).toContain('<div id="root"></div>');
      expect(res.headers["cache-control"]).toBe("no-cache");
      expect(res.headers["content-security-policy"]).toBe(DASHBOARD_CSP);
      expect(res.headers["content-security-policy"]).toContain("script-src 'self'");
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
    },
  );

  it("serves hashed assets for a year, brotli or gzip as the browser accepts", async () => {
    expect(mainScript).toBeDefined();
    const url = `/assets/${mainScript}`;
    const plain = readFileSync(join(DIST, "assets", String(mainScript)));

    const br = await t.app.inject({ method: "GET", url, headers: { "accept-encoding": "gzip, deflate, br" } });
    expect(br.statusCode).toBe(200);
    expect(br.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers["content-type"]).toMatch(/javascript/);
    expect(String(br.headers.vary)).toMatch(/accept-encoding/i);
    expect(br.rawPayload.length).toBeLessThan(plain.length / 2);
    expect(brotliDecompressSync(br.rawPayload).equals(plain)).toBe(true);

    const gz = await t.app.inject({ method: "GET", url, headers: { "accept-encoding": "gzip" } });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz.rawPayload).equals(plain)).toBe(true);

    const identity = await t.app.inject({ method: "GET", url, headers: { "accept-encoding": "identity" } });
    expect(identity.headers["content-encoding"]).toBeUndefined();
    expect(identity.rawPayload.equals(plain)).toBe(true);
  });

  it("answers a missing asset with a 404, not the page", async () => {
    const res = await t.call({ method: "GET", url: "/assets/index-missing.js" });
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain("Route GET /assets/index-missing.js does not exist");
    // The precompressed siblings are not files of their own.
    expect((await t.call({ method: "GET", url: `/assets/${mainScript}.br` })).statusCode).toBe(404);
  });

  it.each([
    "/api",
    "/api/nope",
    "/api/v1/nope",
    "/go",
    "/go/1",
    "/postback",
    "/collect",
    "/mcp/x",
    "/metrics/x",
    "/active-version/x",
  ])("leaves %s to the service: its own 404, never the page", async (url) => {
    const res = await t.call({ method: "GET", url });
    expect(res.statusCode).toBe(404);
    // The service's not-found answer (JSON under /api, text elsewhere), as without the dashboard.
    expect(res.headers["content-type"]).not.toMatch(/text\/html/);
    expect(res.body).toContain(`Route GET ${url} does not exist`);
    if (url.startsWith("/api")) expect(res.json()).toMatchObject({ code: "not_found" });
    expect(res.headers["content-security-policy"]).toBeUndefined();
  });

  it("keeps the service's own answers", async () => {
    const version = await t.call({ method: "GET", url: "/active-version" });
    expect(version.statusCode).toBe(200);
    expect(version.headers["content-type"]).toMatch(/application\/json/);
    const me = await t.call({ method: "GET", url: "/api/v1/me" });
    expect(me.statusCode).toBe(401);
    expect((await t.call({ method: "GET", url: "/api/swagger/v1/swagger.json" })).statusCode).toBe(200);
    // Other methods on client routes are not the dashboard's.
    expect((await t.call({ method: "POST", url: "/sign-in" })).statusCode).toBe(404);
  });

  it("keeps the dashboard out of the API document", async () => {
    const doc = (await t.call({ method: "GET", url: "/api/swagger/v1/swagger.json" })).json() as unknown as {
      paths: Record<string, unknown>;
    };
    expect(
      Object.keys(doc.paths).filter((p) => !p.startsWith("/api") && !/^\/(go|postback|collect|mcp)/.test(p)),
    ).toEqual([]);
  });
});

describe("dashboard not built", () => {
  it("answers / with a 503 that says how to build it", async () => {
    const app = Fastify({ logger: false });
    await app.register(dashboardRoutes({ root: join(tmpdir(), "no-dashboard-here") }));
    const res = await app.inject({ method: "GET", url: "/" });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain("scripts/build-web.ts");
    await app.close();
  });
});

describe("dashboard rebuilt while the service runs", () => {
  it("serves the new build's hashed assets, never their compressed siblings or a path outside", async () => {
    const root = mkdtempSync(join(tmpdir(), "dashboard-late-"));
    mkdirSync(join(root, "assets"));
    writeFileSync(join(root, "index.html"), '<div id="root"></div>');
    writeFileSync(join(root, "assets", "index-old.js"), "old();");
    const app = Fastify({ logger: false });
    await app.register(dashboardRoutes({ root }));
    await app.ready();
    try {
      // Written after the start, as `npm run build-web` would.
      writeFileSync(join(root, "assets", "page-new.js"), "late();");
      writeFileSync(join(root, "assets", "page-new.js.br"), "compressed bytes");
      const late = await app.inject({ method: "GET", url: "/assets/page-new.js" });
      expect(late.statusCode).toBe(200);
      expect(late.body).toBe("late();");
      expect(late.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
      expect((await app.inject({ method: "GET", url: "/assets/page-new.js.br" })).statusCode).toBe(404);
      writeFileSync(join(root, "outside.txt"), "not an asset");
      for (const url of ["/assets/..%2Foutside.txt", "/assets/%2E%2E/outside.txt"]) {
        const res = await app.inject({ method: "GET", url });
        expect(res.body, url).not.toContain("not an asset");
      }
      expect((await app.inject({ method: "GET", url: "/assets/gone.js" })).statusCode).toBe(404);
    } finally {
      await app.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
