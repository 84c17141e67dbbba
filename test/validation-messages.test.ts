import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

/**
 * Schema failures read as sentences naming the field (schema-messages.ts), and a request with
 * several bad fields hears about all of them at once (ajv's allErrors).
 */
describe("validation messages", () => {
  let t: TestApp;
  let who: Tenancy;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 1000 } } });
    who = await seedTenancy(t);
  });
  afterAll(() => t.close());

  const createKey = (payload: Record<string, unknown>) =>
    t.call({ method: "POST", url: "/api/v1/api-tokens", headers: { authorization: who.bearer }, payload });

  it("says a minimum length in characters", async () => {
    const res = await createKey({ name: "ab" });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      code: "validation_error",
      message: "name must be at least 4 characters long",
      data: { errors: [{ path: "name", message: "must be at least 4 characters long" }] },
    });
  });

  it("reports every bad field of a request, each once", async () => {
    const res = await createKey({ name: "ab", expirationDate: "soon", scopes: "x".repeat(3), extra: true });
    expect(res.statusCode).toBe(400);
    const { message, data } = res.json() as { message: string; data: { errors: { path: string; message: string }[] } };
    expect(data.errors).toEqual(
      expect.arrayContaining([
        { path: "name", message: "must be at least 4 characters long" },
        { path: "expirationDate", message: "must be a date and time such as 2026-01-31T09:30:00Z" },
        { path: "extra", message: "is not an accepted property" },
      ]),
    );
    expect(new Set(data.errors.map((e) => `${e.path} ${e.message}`)).size).toBe(data.errors.length);
    for (const e of data.errors) expect(message).toContain(`${e.path} ${e.message}`);
  });

  it("explains a pattern with the schema's description", async () => {
    const res = await t.call({
      method: "GET",
      url: `/api/admin/tenants/${who.tenantId}/webhook-usage?month=2026-13`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe(
      "month is not in the accepted form: Calendar month (UTC), YYYY-MM; default the current one",
    );
    expect(res.json().message).not.toMatch(/pattern|\^/);
  });

  it("says a maximum and an enum's accepted values", async () => {
    const over = await t.call({
      method: "GET",
      url: "/api/v1/audit-log?limit=100000",
      headers: { authorization: who.bearer },
    });
    expect(over.statusCode).toBe(400);
    expect(over.json().message).toMatch(/^limit must be at most \d+$/);

    const bogus = await t.call({
      method: "GET",
      url: "/api/v1/issues?status=bogus",
      headers: { authorization: who.bearer },
    });
    expect(bogus.statusCode).toBe(400);
    expect(bogus.json().message).toMatch(/^status 'bogus' is not one of '/);
  });

  it("says a report window's span in days", async () => {
    const res = await t.call({
      method: "GET",
      url: "/api/v1/composites/accounts/metrics?metricsFrom=2024-01-01&metricsTo=2026-11-28",
      headers: { authorization: who.bearer },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/spans \d+ days$/);
  });
});
