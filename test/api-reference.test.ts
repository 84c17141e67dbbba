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
