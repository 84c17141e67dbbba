import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../src/platform/ids.js";
import { seedTenancy, startTestApp, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";

// POST /collect and a click still in another node's buffer: COLLECT_CLICK_WAIT_MS bounds how
// long a page view waits for it, counted from the time in the click id (docs/limits.md).

const WAIT_MS = 1000;
let a: TestApp;
let b: TestApp;
let cat: CatalogFixture;

beforeAll(async () => {
  // Two nodes on one database; buffered clicks are written only when something asks for them.
  const options = { env: { COLLECT_CLICK_WAIT_MS: String(WAIT_MS) }, app: { clicks: { intervalMs: 3_600_000 } } };
  a = await startTestApp(options);
  b = await startTestApp({ ...options, testDb: a.testDb });
  cat = await seedCatalog(b, await seedTenancy(b));
});
afterAll(async () => {
  await b.close();
  await a.close();
});

async function collect(clickId: string): Promise<{ status: number; elapsedMs: number }> {
  const started = Date.now();
  const res = await a.call({
    method: "POST",
    url: "/collect",
    payload: { clickId, url: "https://brand.example/landing" },
    remoteAddress: "10.66.0.1",
  });
  return { status: res.statusCode, elapsedMs: Date.now() - started };
}

describe("POST /collect with COLLECT_CLICK_WAIT_MS", () => {
  it("records a view of a click the other node writes a moment later", async () => {
    const clickId = await clickThrough(b, cat);
    expect(b.ctx.tracking.clicks.holds(clickId)).toBe(true);
    const flushed = new Promise((resolve) => setTimeout(resolve, 200)).then(() => b.ctx.tracking.clicks.flush());
    const answer = await collect(clickId);
    await flushed;
    expect(answer.status).toBe(201);
  });

  it("holds a forged fresh-looking id no longer than the bound", async () => {
    const answer = await collect(newId("clk"));
    expect(answer.status).toBe(404);
    expect(answer.elapsedMs).toBeLessThan(WAIT_MS + 500);
  });

  it("answers at once for an id that is not a click made within the bound", async () => {
    for (const id of ["clk_0000000000000000000000000z", "not-a-click-id"]) {
      const answer = await collect(id);
      expect(answer.status).toBe(404);
      expect(answer.elapsedMs).toBeLessThan(WAIT_MS / 2);
    }
  });
});
