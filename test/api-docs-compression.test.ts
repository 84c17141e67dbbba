import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";

// The OpenAPI document and Swagger UI's files are sent compressed (brotli or gzip, by
// Accept-Encoding), compressed once and kept, with an ETag and a 304 for a browser that has them.

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});

afterAll(async () => {
  await t.close();
});

const DOCUMENT = "/api/swagger/v1/swagger.json";

describe("the OpenAPI document", () => {
  it("is sent brotli- or gzip-compressed by Accept-Encoding, the same JSON as plain", async () => {
    const plain = await t.app.inject({ method: "GET", url: DOCUMENT });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(plain.headers.vary).toBe("accept-encoding");
    const json = JSON.parse(plain.body) as { openapi: string; paths: Record<string, unknown> };
    expect(Object.keys(json.paths).length).toBeGreaterThan(10);

    const br = await t.app.inject({
      method: "GET",
      url: DOCUMENT,
      headers: { "accept-encoding": "gzip, deflate, br" },
    });
    expect(br.statusCode).toBe(200);
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toBe("accept-encoding");
    expect(br.rawPayload.length * 5).toBeLessThan(plain.rawPayload.length);
    expect(brotliDecompressSync(br.rawPayload).toString("utf8")).toBe(plain.body);

    const gz = await t.app.inject({ method: "GET", url: DOCUMENT, headers: { "accept-encoding": "gzip, br;q=0" } });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gz.rawPayload.length * 4).toBeLessThan(plain.rawPayload.length);
    expect(gunzipSync(gz.rawPayload).toString("utf8")).toBe(plain.body);

    // One resource in every encoding: one ETag.
    expect(plain.headers.etag).toMatch(/^"[\w-]{20,}"$/);
    expect(br.headers.etag).toBe(plain.headers.etag);
    expect(gz.headers.etag).toBe(plain.headers.etag);
  });

  it("answers 304 with no body to If-None-Match naming its ETag", async () => {
    const first = await t.app.inject({ method: "GET", url: DOCUMENT, headers: { "accept-encoding": "br" } });
    const etag = String(first.headers.etag);
    const again = await t.app.inject({
      method: "GET",
      url: DOCUMENT,
      headers: { "accept-encoding": "br", "if-none-match": etag },
    });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    const other = await t.app.inject({ method: "GET", url: DOCUMENT, headers: { "if-none-match": '"other"' } });
    expect(other.statusCode).toBe(200);
  });

  it("pre-fills the reports' dates with the dashboard's default window (the last 30 days)", async () => {
    const res = await t.app.inject({ method: "GET", url: DOCUMENT });
    const doc = JSON.parse(res.body) as {
      paths: Record<string, { get: { parameters: { name: string; schema: { example?: string } }[] } }>;
    };
    const params = doc.paths["/api/v1/reports/events/performance"]?.get.parameters ?? [];
    const example = (name: string) => params.find((p) => p.name === name)?.schema.example;
    const today = t.ctx.clock.now().toISOString().slice(0, 10);
    const from = new Date(Date.parse(`${today}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
    expect(example("conversionDateTo")).toBe(today);
    expect(example("conversionDateFrom")).toBe(from);
  });
});

describe("Swagger UI's files", () => {
  it.each(["/api/swagger/static/swagger-ui-bundle.js", "/api/swagger/static/swagger-ui.css", "/api/swagger/json"])(
    "%s is sent compressed, decompressing to the plain bytes, with an ETag and 304",
    async (url) => {
      const plain = await t.app.inject({ method: "GET", url });
      expect(plain.statusCode).toBe(200);
      expect(plain.headers["content-encoding"]).toBeUndefined();
      for (let i = 0; i < 2; i++) {
        const br = await t.app.inject({ method: "GET", url, headers: { "accept-encoding": "br, gzip" } });
        expect(br.statusCode).toBe(200);
        expect(br.headers["content-encoding"]).toBe("br");
        expect(br.headers.vary).toBe("accept-encoding");
        expect(br.rawPayload.length * 2).toBeLessThan(plain.rawPayload.length);
        expect(brotliDecompressSync(br.rawPayload).equals(plain.rawPayload)).toBe(true);
        expect(br.headers.etag).toBe(plain.headers.etag);
      }
      const gz = await t.app.inject({ method: "GET", url, headers: { "accept-encoding": "gzip" } });
      expect(gz.headers["content-encoding"]).toBe("gzip");
      expect(gunzipSync(gz.rawPayload).equals(plain.rawPayload)).toBe(true);
      const cached = await t.app.inject({
        method: "GET",
        url,
        headers: { "accept-encoding": "br", "if-none-match": String(plain.headers.etag) },
      });
      expect(cached.statusCode).toBe(304);
      expect(cached.rawPayload.length).toBe(0);
    },
  );
});
