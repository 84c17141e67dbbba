import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPENAPI_PATH, WEB_API_TYPES_FILE, webApiTypes } from "../scripts/web-api-types.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

// The dashboard's client is typed from web/src/api/schema.d.ts. When a route's schema changes,
// the served document changes: this fails until the types are regenerated
// (npx tsx scripts/web-api-types.ts), so the dashboard cannot drift from the API it calls.
describe("the dashboard's API types", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("match the OpenAPI document the service serves", { timeout: 60_000 }, async () => {
    const res = await t.call({ method: "GET", url: OPENAPI_PATH });
    expect(res.statusCode).toBe(200);
    const expected = await webApiTypes(JSON.parse(res.body));
    const committed = await readFile(WEB_API_TYPES_FILE, "utf8");
    // Not toBe: a 16,000-line diff would drown the message.
    expect(committed === expected, "web/src/api/schema.d.ts is stale: run `npx tsx scripts/web-api-types.ts`").toBe(
      true,
    );
  });

  it("would notice a changed document", async () => {
    const doc = JSON.parse((await t.call({ method: "GET", url: OPENAPI_PATH })).body) as {
      paths: Record<string, unknown>;
    };
    const { "/api/v1/me": _removed, ...paths } = doc.paths;
    const changed = await webApiTypes({ ...doc, paths });
    expect(changed).not.toBe(await readFile(WEB_API_TYPES_FILE, "utf8"));
  });
});
