import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

// Rotating the postback key with a grace period: the replaced key records conversions for the
// tenant until the end the person picked, then is refused like any unknown key; a second
// rotation stops the older key at once; the grace can be ended early; the settings show its end;
// bad values are refused naming graceHours; no key is ever in an audit entry.

const HOUR = 3_600_000;
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

const postback = (key: string, externalId: string) =>
  t.call({ method: "GET", url: `/postback/${key}?type=Signup&externalId=${externalId}` });

async function rotate(who: Tenancy, payload?: Record<string, unknown>) {
  return t.call({
    method: "POST",
    url: "/api/v1/settings/postback-key",
    headers: { authorization: who.apiKey },
    ...(payload ? { payload } : {}),
  });
}

async function settings(who: Tenancy) {
  // The API key: a person's session would expire as the test clock runs days ahead.
  const res = await t.call({ method: "GET", url: "/api/v1/settings", headers: { authorization: who.apiKey } });
  expect(res.statusCode).toBe(200);
  return res.json().data as { previousKeyValidUntil: string | null };
}

describe("postback key rotation with a grace period", () => {
  it("keeps the replaced key working until the end picked, then refuses it", async () => {
    const who = await seedTenancy(t);
    const rotated = await rotate(who, { graceHours: 24 });
    expect(rotated.statusCode, rotated.body).toBe(201);
    const { postbackKey, previousKeyValidUntil } = rotated.json().data;
    const until = new Date(t.clock.now().getTime() + 24 * HOUR).toISOString();
    expect(previousKeyValidUntil).toBe(until);
    expect((await settings(who)).previousKeyValidUntil).toBe(until);

    // Both keys record for the tenant during the grace period.
    expect((await postback(who.postbackKey, "old-1")).statusCode).toBe(201);
    expect((await postback(postbackKey, "new-1")).statusCode).toBe(201);
    const listed = await t.call({
      method: "GET",
      url: "/api/v1/conversions?externalId=old-1",
      headers: { authorization: who.apiKey },
    });
    expect(listed.json().data).toHaveLength(1);

    // Up to its last millisecond, then never again.
    t.clock.advance(24 * HOUR - 1);
    expect((await postback(who.postbackKey, "old-2")).statusCode).toBe(201);
    t.clock.advance(1);
    expect((await postback(who.postbackKey, "old-3")).statusCode).toBe(404);
    expect((await postback(postbackKey, "new-2")).statusCode).toBe(201);
    expect((await settings(who)).previousKeyValidUntil).toBeNull();
  });

  it("stops at once without a grace period, as before", async () => {
    const who = await seedTenancy(t);
    const rotated = await rotate(who);
    expect(rotated.json().data.previousKeyValidUntil).toBeNull();
    expect((await postback(who.postbackKey, "x-1")).statusCode).toBe(404);
    expect((await settings(who)).previousKeyValidUntil).toBeNull();
  });

  it("rotating again during a grace period stops the older key at once", async () => {
    const who = await seedTenancy(t);
    const first = (await rotate(who, { graceHours: 48 })).json().data.postbackKey as string;
    const second = (await rotate(who, { graceHours: 1 })).json().data.postbackKey as string;
    expect((await postback(who.postbackKey, "r-1")).statusCode).toBe(404);
    expect((await postback(first, "r-2")).statusCode).toBe(201);
    expect((await postback(second, "r-3")).statusCode).toBe(201);
    t.clock.advance(HOUR);
    expect((await postback(first, "r-4")).statusCode).toBe(404);
  });

  it("ends the grace period early, once; another tenant cannot end it", async () => {
    const who = await seedTenancy(t);
    const other = await seedTenancy(t);
    await rotate(who, { graceHours: 72 });
    const end = (as: Tenancy) =>
      t.call({
        method: "DELETE",
        url: "/api/v1/settings/postback-key/previous",
        headers: { authorization: as.apiKey },
      });
    expect((await end(other)).statusCode).toBe(404);
    expect((await postback(who.postbackKey, "e-1")).statusCode).toBe(201);
    const ended = await end(who);
    expect(ended.statusCode, ended.body).toBe(200);
    expect((await postback(who.postbackKey, "e-2")).statusCode).toBe(404);
    expect((await end(who)).statusCode).toBe(404);
    expect((await settings(who)).previousKeyValidUntil).toBeNull();
  });

  it("refuses a grace period that is not 0 to 168 whole hours, naming graceHours", async () => {
    const who = await seedTenancy(t);
    for (const graceHours of [-1, 169, 1.5, "a day"]) {
      const res = await rotate(who, { graceHours });
      expect(res.statusCode, String(graceHours)).toBe(400);
      expect(res.json().data.errors[0].path).toBe("graceHours");
    }
    // Nothing was rotated.
    expect((await postback(who.postbackKey, "g-1")).statusCode).toBe(201);
  });

  it("audits the rotation with its grace, and never a key", async () => {
    const who = await seedTenancy(t);
    const rotated = await rotate(who, { graceHours: 3 });
    const newKey = rotated.json().data.postbackKey as string;
    const audit = await t.call({ method: "GET", url: "/api/v1/audit-log", headers: { authorization: who.bearer } });
    expect(audit.statusCode, audit.body).toBe(200);
    const entry = (audit.json().data as { action: string; details: Record<string, unknown> }[]).find(
      (e) => e.action === "tenant.postback_key_rotated",
    );
    expect(entry?.details).toMatchObject({ graceHours: 3 });
    expect(audit.body).not.toContain(newKey);
    expect(audit.body).not.toContain(who.postbackKey);
  });
});
