import { createHash } from "node:crypto";
import { runInNewContext } from "node:vm";
import { gunzipSync } from "node:zlib";
import scalar from "@scalar/fastify-api-reference";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractBundle } from "../src/features/api-docs/scalar-bundle.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

// The Scalar reference page (/api/docs) is served by our own routes: the page, the redirect to
// it, and Scalar's script read from the installed package at the first request, kept compressed.
// docs-browser.test.ts renders it in a browser; this checks what the routes answer.

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});

afterAll(async () => {
  await t.close();
});

/** What the package's own plugin serves as the script: the reference. */
async function pluginScript(): Promise<string> {
  const app = Fastify({ logger: false });
  await app.register(scalar, { routePrefix: "/reference", configuration: { url: "/openapi.json" } });
  try {
    const res = await app.inject({ method: "GET", url: "/reference/js/scalar.js" });
    expect(res.statusCode).toBe(200);
    return res.body;
  } finally {
    await app.close();
  }
}

describe("API reference page", () => {
  it("redirects /api/docs to /api/docs/ and renders the page with our configuration", async () => {
    const redirect = await t.app.inject({ method: "GET", url: "/api/docs?x=1" });
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe("/api/docs/");

    const page = await t.app.inject({ method: "GET", url: "/api/docs/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.body).toContain('<script src="js/scalar.js"></script>');
    expect(page.body).toContain('"url": "/api/swagger/v1/swagger.json"');
    expect(page.body).toContain('"showDeveloperTools": "never"');
    // No CDN: the page loads nothing from another origin.
    expect(page.body).not.toMatch(/https?:\/\//);
  });

  it("serves Scalar's script gzip-compressed, or plain to a client without gzip, the same bytes", async () => {
    const gzipped = await t.app.inject({
      method: "GET",
      url: "/api/docs/js/scalar.js",
      headers: { "accept-encoding": "br, gzip" },
    });
    expect(gzipped.statusCode).toBe(200);
    expect(gzipped.headers["content-type"]).toBe("application/javascript; charset=utf-8");
    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(gzipped.headers.vary).toBe("accept-encoding");
    const script = gunzipSync(gzipped.rawPayload).toString("utf8");

    const plain = await t.app.inject({
      method: "GET",
      url: "/api/docs/js/scalar.js",
      headers: { "accept-encoding": "gzip;q=0, identity" },
    });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body).toBe(script);

    expect(script).toBe(await pluginScript());
    expect(script.length).toBeGreaterThan(1_000_000);
    expect(script).toContain("createApiReference");
  });

  it("is not in the OpenAPI document", async () => {
    const res = await t.app.inject({ method: "GET", url: "/api/swagger/v1/swagger.json" });
    const paths = Object.keys((JSON.parse(res.body) as { paths: Record<string, unknown> }).paths);
    expect(paths.filter((p) => p.startsWith("/api/docs"))).toEqual([]);
  });
});

// Neither page may be framed by another site or run a script this server did not serve.
describe("security headers of the documentation pages", () => {
  const PAGES = [
    "/api/docs",
    "/api/docs/",
    "/api/docs/js/scalar.js",
    "/api/swagger",
    "/api/swagger/",
    "/api/swagger/static/swagger-ui-bundle.js",
    "/api/swagger/static/swagger-initializer.js",
    "/api/swagger/static/swagger-ui.css",
  ];

  /** The policy's directives by name. */
  function directives(policy: unknown): Map<string, string[]> {
    expect(typeof policy).toBe("string");
    return new Map(
      String(policy)
        .split(";")
        .map((part) => part.trim().split(/\s+/))
        .filter((words) => words[0] !== "")
        .map(([name = "", ...values]) => [name, values]),
    );
  }

  it.each(PAGES)("%s: CSP, no framing, nosniff, no referrer", async (url) => {
    const res = await t.app.inject({ method: "GET", url, headers: { "accept-encoding": "gzip" } });
    expect(res.statusCode, res.body.slice(0, 200)).toBeLessThan(400);
    expect(res.headers["x-frame-options"]).toBe("DENY");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    expect(res.headers["referrer-policy"]).toBe("no-referrer");
    const csp = directives(res.headers["content-security-policy"]);
    expect(csp.get("frame-ancestors")).toEqual(["'none'"]);
    expect(csp.get("default-src")).toEqual(["'none'"]);
    expect(csp.get("object-src")).toEqual(["'none'"]);
    expect(csp.get("base-uri")).toEqual(["'none'"]);
    const scripts = csp.get("script-src") ?? [];
    expect(scripts[0]).toBe("'self'");
    expect(scripts.filter((v) => v.includes("unsafe") || v === "*" || v.endsWith(":"))).toEqual([]);
    expect(csp.get("style-src")?.[0]).toBe("'self'");
    // Only Scalar's page needs inline styles (docs/operations.md); Swagger UI's are hashed.
    if (url.startsWith("/api/swagger")) {
      expect((csp.get("style-src") ?? []).filter((v) => v.includes("unsafe"))).toEqual([]);
    }
    // Nothing, a style included, may load from or send to another site.
    for (const name of ["img-src", "font-src", "connect-src"]) {
      const others = (csp.get(name) ?? []).filter((v) => !["'self'", "data:", "blob:"].includes(v));
      expect(
        others.filter((v) => v !== new URL(t.ctx.config.publicBaseUrl).origin),
        name,
      ).toEqual([]);
    }
  });

  it("/api/docs/ admits its inline scripts by a nonce of its own, new on every answer", async () => {
    const nonces: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await t.app.inject({ method: "GET", url: "/api/docs/" });
      const policy = String(res.headers["content-security-policy"]);
      const nonce = /'nonce-([A-Za-z0-9+/=]{22,})'/.exec(policy)?.[1] as string;
      expect(nonce, policy).toBeTruthy();
      expect(directives(policy).get("script-src")).toEqual(["'self'", `'nonce-${nonce}'`]);
      // Every inline script carries it: the one that starts Scalar, and zod's switch off eval
      // that runs before the bundle.
      const inline = res.body.match(/<script\b(?![^>]*\ssrc=)[^>]*>/g) ?? [];
      expect(inline).toHaveLength(2);
      for (const tag of inline) expect(tag).toContain(`nonce="${nonce}"`);
      expect(res.body.indexOf("jitless: true")).toBeGreaterThan(0);
      expect(res.body.indexOf("jitless: true")).toBeLessThan(res.body.indexOf('src="js/scalar.js"'));
      nonces.push(nonce);
    }
    expect(nonces[0]).not.toBe(nonces[1]);
  });

  it("Swagger UI's page has no inline script; its logo's style element is admitted by its hash", async () => {
    const res = await t.app.inject({ method: "GET", url: "/api/swagger/" });
    expect(res.body).not.toMatch(/<script\b(?![^>]*\ssrc=)[^>]*>\s*\S/);
    expect(res.body).not.toMatch(/<style\b|\sstyle=/);
    const policy = String(res.headers["content-security-policy"]);
    expect(policy).not.toContain("nonce");
    const logo = ".logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}";
    const hash = createHash("sha256").update(logo).digest("base64");
    expect(directives(policy).get("style-src")).toEqual(["'self'", `'sha256-${hash}'`]);
  });
});

describe("extractBundle", () => {
  it("decodes JavaScript string escapes as JavaScript does", () => {
    const literal = `${String.raw`a\\b\"c\nd\x41\u0042\u{1F600}\uD83D\uDE00é\é\
e\te\u00e9`}ü€`;
    const source = `var x = 1;\nvar standalone_default = "${literal}";\n//#endregion\n`;
    const expected: unknown = runInNewContext(`"${literal}"`, {});
    expect(extractBundle(Buffer.from(source)).toString("utf8")).toBe(expected);
  });

  it("names the package when its module no longer holds the script where it was read", () => {
    expect(() => extractBundle(Buffer.from("export default 1;"))).toThrow(/@scalar\/fastify-api-reference/);
  });
});
