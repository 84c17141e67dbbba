import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type TestApp } from "./helpers/app.js";

describe("smoke", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("answers /me with a bearer token", async () => {
    const who = await seedTenancy(t);
    const res = await t.call({ method: "GET", url: "/api/v1/me", headers: { authorization: who.bearer } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.email).toBe(who.email);
  });
});
