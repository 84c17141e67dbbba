import { afterEach, describe, expect, it } from "vitest";
import { buildApp } from "../src/app.js";
import { testConfig } from "./helpers/app.js";
import { openTestDb, type TestDb } from "./helpers/db.js";

// The worker role's loops (mail outbox, outgoing webhook delivery, operational webhooks) have
// one owner: buildApp makes them, main.ts starts them for the worker role, and closing the app
// stops them, after the requests have drained. main.ts's shutdown stops none of them itself.

describe("the worker loops", () => {
  let testDb: TestDb | undefined;
  afterEach(async () => {
    await testDb?.dispose();
    testDb = undefined;
  });

  it("stop when the app closes, and a second start or stop is harmless", async () => {
    testDb = await openTestDb();
    const { app, workers } = await buildApp({
      config: testConfig(),
      db: testDb.db,
      jwtSecret: "test-jwt-secret-that-is-long-enough-0123456789",
      logger: false,
    });
    await app.ready();
    expect(workers.running).toBe(false);
    await workers.start();
    await workers.start();
    expect(workers.running).toBe(true);
    await app.close();
    expect(workers.running).toBe(false);
    await workers.stop();
    expect(workers.running).toBe(false);
  });
});
