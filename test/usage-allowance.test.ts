import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, seedTenancy, type TestApp } from "./helpers/app.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  cancelWaitingEvents,
  createHook,
  receiverPaths,
  signInPerson,
  startWebhookTestApp,
  withId,
} from "./helpers/webhooks.js";

// GET /usage/allowance: this UTC month's webhook deliveries against the monthly allowance, and the
// ones held for want of it, as the metering counts them (docs/outgoing-webhooks.md).

const ADMIN = { authorization: `Bearer ${ADMIN_KEY}` };
const START = new Date("2026-11-20T10:00:00.000Z");
const PERIOD = { from: "2026-11-01T00:00:00.000Z", to: "2026-12-01T00:00:00.000Z" };

let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  t = await startWebhookTestApp();
  t.clock.set(START);
  rx = await startReceiver();
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});
afterEach(() => cancelWaitingEvents(t, { statuses: ["Queued", "Retrying", "Held", "Paused"] }));

const allowance = (authorization: string) =>
  t.call({ method: "GET", url: "/api/v1/usage/allowance", headers: { authorization } });

describe("GET /usage/allowance", () => {
  it("answers the month's deliveries sent and held against an allowance of 2 (sent up to 110%, rounded up)", async () => {
    const created = await t.call({
      method: "POST",
      url: "/api/admin/tenants",
      headers: ADMIN,
      payload: { name: "Allowance two", webhookAllowance: 2 },
    });
    expect(created.statusCode, created.body).toBe(201);
    const tenantId: string = created.json().data.id;
    const { bearer } = await signInPerson(t, tenantId, { name: "Owner", permissions: ["account.admin"] });
    await createHook(t, bearer, { url: withId(rx, receiverPaths("/allowance")("two")) });

    expect((await allowance(bearer)).json().data).toEqual({ period: PERIOD, allowance: 2, used: 0, held: 0 });

    const res = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: bearer },
      payload: { items: Array.from({ length: 5 }, () => ({ type: "Signup" })) },
    });
    expect(res.statusCode, res.body).toBe(201);
    await t.ctx.delivery.tick();
    const answer = await allowance(bearer);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.json().data).toEqual({ period: PERIOD, allowance: 2, used: 3, held: 2 });
  });

  it("answers null for an unlimited tenant, and 403 without usage.read", async () => {
    const created = await t.call({
      method: "POST",
      url: "/api/admin/tenants",
      headers: ADMIN,
      payload: { name: "Unlimited", webhookAllowance: null },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { bearer } = await signInPerson(t, created.json().data.id, { name: "Owner", permissions: ["account.admin"] });
    const res = await allowance(bearer);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ period: PERIOD, allowance: null, used: 0, held: 0 });

    const reader = await seedTenancy(t, { permissions: ["reports.read"], key: { scopes: ["reports.read"] } });
    expect((await allowance(reader.bearer)).statusCode).toBe(403);
  });
});
