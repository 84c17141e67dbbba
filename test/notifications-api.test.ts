import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR_MS } from "../src/platform/durations.js";
import { ADMIN_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

const BASE = "/api/v1/notifications/webhooks";
const RECORD_KEYS = ["createdAt", "description", "events", "id", "previousSecretExpiresAt", "updatedAt", "url"];
const TYPES = [
  "api_token.expiring",
  "api_token.expired",
  "issue.opened",
  "issue.closed",
  "outgoing_webhook.suspended",
  "outgoing_webhook.enabled",
];

interface Registration {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1,hooks.internal" } });
});
afterAll(() => t.close());

const tenant = () => seedTenancy(t);
const auth = (who: Tenancy) => ({ authorization: who.apiKey });

function post(who: Tenancy, payload: object, url = BASE) {
  return t.call({ method: "POST", url, headers: auth(who), payload });
}

async function register(who: Tenancy, payload: object = {}): Promise<Registration & { secret: string }> {
  const res = await post(who, { url: "https://receiver.example/hooks", ...payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

const get = (who: Tenancy, id: string) => t.call({ method: "GET", url: `${BASE}/${id}`, headers: auth(who) });
const list = (who: Tenancy, query = "") => t.call({ method: "GET", url: `${BASE}${query}`, headers: auth(who) });
const patch = (who: Tenancy, id: string, payload: object) =>
  t.call({ method: "PATCH", url: `${BASE}/${id}`, headers: auth(who), payload });
const remove = (who: Tenancy, id: string) => t.call({ method: "DELETE", url: `${BASE}/${id}`, headers: auth(who) });
const rotate = (who: Tenancy, id: string) =>
  t.call({ method: "POST", url: `${BASE}/${id}/rotate-secret`, headers: auth(who) });

describe("operational webhook registration", () => {
  let who: Tenancy;
  beforeAll(async () => {
    who = await tenant();
  });

  it("registers a webhook and shows a whsec_ secret of 32 random bytes once", async () => {
    const res = await post(who, { url: "https://receiver.example/hooks", description: "  Ops pager  " });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().code).toBe("ok");
    const created = res.json().data;
    expect(Object.keys(created).sort()).toEqual([...RECORD_KEYS, "secret"].sort());
    expect(created).toMatchObject({
      url: "https://receiver.example/hooks",
      description: "Ops pager",
      events: [],
      previousSecretExpiresAt: null,
      createdAt: t.clock.now().toISOString(),
    });
    expect(created.id).toMatch(/^wh_/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(created.secret.slice(6), "base64")).toHaveLength(32);

    const { secret, ...record } = created;
    const read = await get(who, created.id);
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toEqual(record);
    expect(read.body).not.toContain(secret.slice(6));
    expect((await list(who)).body).not.toContain(secret.slice(6));
    // Encrypted at rest: the stored value is not the secret, nor does it contain it.
    const [row] = await t.ctx.db.query<{ secret_enc: string }>(
      "select secret_enc from notification_webhooks where id = $1",
      [created.id],
    );
    expect(row?.secret_enc).not.toContain(secret.slice(6));
    expect(t.ctx.notifications.box.open(row?.secret_enc ?? "")).toBe(secret);
  });

  it("gives every registration its own secret", async () => {
    const a = await register(who);
    const b = await register(who);
    expect(a.secret).not.toBe(b.secret);
  });

  it("keeps an event filter, and an empty or absent one means every type", async () => {
    const some = await register(who, { events: ["issue.opened", "api_token.expired"] });
    expect(some.events).toEqual(["issue.opened", "api_token.expired"]);
    expect((await register(who, { events: [] })).events).toEqual([]);
    expect((await register(who, { events: TYPES })).events).toEqual(TYPES);
  });

  it("accepts plain http only for a host or address on WEBHOOK_ALLOWED_HOSTS", async () => {
    for (const url of ["http://127.0.0.1:9999/hooks", "http://hooks.internal/ops", "http://HOOKS.internal:8080/"]) {
      const res = await post(who, { url });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(201);
    }
  });

  it.each([
    ["plain http to the internet", "http://receiver.example/hooks", /url must use https/],
    ["another scheme", "ftp://receiver.example/hooks", /url must use https, not 'ftp'/],
    ["not a URL", "receiver.example/hooks", /url 'receiver.example\/hooks' is not an absolute URL/],
    ["a private address", "https://10.1.2.3/hooks", /10\.1\.2\.3, a private or reserved address/],
    ["a link-local address", "https://169.254.169.254/latest", /private or reserved/],
    ["an IPv6 unique-local address", "https://[fd00::1]/hooks", /private or reserved/],
  ])("refuses %s with a 400 naming the reason", async (_label, url, message) => {
    const res = await post(who, { url });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: "validation_error", data: { errors: [{ path: "url" }] } });
    expect(res.json().message).toMatch(message);
  });

  it.each([
    [
      "an unknown event type, naming it",
      { events: ["issue.opened", "issue.reopened"] },
      /events\[1\] 'issue\.reopened'/,
    ],
    ["a repeated event type", { events: ["issue.opened", "issue.opened"] }, /events/],
    ["an unknown field", { secret: "whsec_mine" }, /secret is not an accepted property/],
    ["a missing url", { url: undefined }, /url is required/],
    ["a description over 500 characters", { description: "x".repeat(501) }, /description/],
    ["a url over 2048 characters", { url: `https://receiver.example/${"x".repeat(2048)}` }, /url/],
  ])("refuses %s (400)", async (_label, payload, message) => {
    const res = await post(who, { url: "https://receiver.example/hooks", ...payload });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe("validation_error");
    expect(res.json().message).toMatch(message);
  });

  it("lists the tenant's webhooks oldest first, paged, with the total", async () => {
    const mine = await tenant();
    const made = [await register(mine), await register(mine), await register(mine)];
    const first = await list(mine, "?limit=2");
    expect(first.statusCode).toBe(200);
    expect(first.json().data.map((w: Registration) => w.id)).toEqual([made[0]?.id, made[1]?.id]);
    expect(first.json().pagination).toEqual({ offset: 0, limit: 2, total: 3 });
    const second = await list(mine, "?offset=2&limit=2");
    expect(second.json().data.map((w: Registration) => w.id)).toEqual([made[2]?.id]);
    expect(second.json().pagination).toEqual({ offset: 2, limit: 2, total: 3 });
    expect((await list(mine, "?limit=501")).statusCode).toBe(400);
    expect((await list(mine, "?bogus=1")).statusCode).toBe(400);
  });

  it("changes the URL, filter and description, with the same URL rules", async () => {
    const hook = await register(who, { description: "before" });
    t.clock.advance(1000);
    const res = await patch(who, hook.id, { url: "https://other.example/x", events: ["issue.closed"] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      url: "https://other.example/x",
      events: ["issue.closed"],
      description: "before",
      updatedAt: t.clock.now().toISOString(),
    });
    expect((await patch(who, hook.id, { description: null })).json().data.description).toBeNull();
    expect((await patch(who, hook.id, { events: [] })).json().data.events).toEqual([]);
    const refused = await patch(who, hook.id, { url: "http://other.example/x" });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(/https/);
    expect((await patch(who, hook.id, {})).statusCode).toBe(400);
    expect((await patch(who, hook.id, { events: ["nope"] })).json().message).toMatch(/'nope'/);
    expect((await patch(who, "wh_doesnotexist", { description: "x" })).statusCode).toBe(404);
    expect((await get(who, hook.id)).json().data.url).toBe("https://other.example/x");
  });

  it("deletes a webhook; a second delete and a read answer 404", async () => {
    const hook = await register(who);
    const res = await remove(who, hook.id);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id: hook.id, deleted: true });
    expect((await get(who, hook.id)).statusCode).toBe(404);
    expect((await remove(who, hook.id)).statusCode).toBe(404);
    expect((await rotate(who, hook.id)).statusCode).toBe(404);
  });

  it("rotates the secret: a new one shown once, the old one signing alongside it for 24 hours", async () => {
    const hook = await register(who);
    const res = await rotate(who, hook.id);
    expect(res.statusCode, res.body).toBe(200);
    const rotated = res.json().data;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(hook.secret);
    const until = new Date(t.clock.now().getTime() + 24 * HOUR_MS).toISOString();
    expect(rotated.previousSecretExpiresAt).toBe(until);
    expect((await get(who, hook.id)).json().data.previousSecretExpiresAt).toBe(until);
    t.clock.advance(24 * HOUR_MS + 1000);
    expect((await get(who, hook.id)).json().data.previousSecretExpiresAt).toBeNull();
  });

  it("allows 20 webhooks per tenant and refuses the 21st with 409", async () => {
    const full = await tenant();
    for (let i = 0; i < 20; i++) await register(full);
    const res = await post(full, { url: "https://receiver.example/one-more" });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: "conflict" });
    expect(res.json().message).toMatch(/20 operational webhooks/);
  });

  it("writes created, updated, secret_rotated and deleted to the audit log, never the secret", async () => {
    const mine = await tenant();
    const hook = await register(mine);
    await patch(mine, hook.id, { description: "changed" });
    const rotated = (await rotate(mine, hook.id)).json().data;
    await remove(mine, hook.id);
    const rows = await t.ctx.db.query<{ action: string; subject_type: string; subject_id: string; details: object }>(
      `select action, subject_type, subject_id, details from audit_log
        where tenant_id = $1 and action like 'notification_webhook.%' order by at, action`,
      [mine.tenantId],
    );
    expect(rows.map((r) => r.action).sort()).toEqual([
      "notification_webhook.created",
      "notification_webhook.deleted",
      "notification_webhook.secret_rotated",
      "notification_webhook.updated",
    ]);
    for (const row of rows) {
      expect(row).toMatchObject({ subject_type: "notification_webhook", subject_id: hook.id });
      expect(JSON.stringify(row.details)).not.toContain(hook.secret.slice(6));
      expect(JSON.stringify(row.details)).not.toContain(rotated.secret.slice(6));
    }
  });
});

describe("access to operational webhooks", () => {
  let owner: Tenancy;
  let hook: Registration & { secret: string };
  let nonAdmin: string;

  beforeAll(async () => {
    owner = await tenant();
    hook = await register(owner);
    const email = `notifications-nonadmin-${Date.now()}@example.com`;
    const password = "correct horse battery";
    const user = await t.call({
      method: "POST",
      url: `/api/admin/tenants/${owner.tenantId}/users`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: {
        email,
        password,
        name: "Not an admin",
        permissions: ["reports.read", "catalog.read", "webhooks.read", "webhooks.update", "traffic-sources.delete"],
      },
    });
    expect(user.statusCode).toBe(201);
    const login = await t.call({ method: "POST", url: "/api/v1/auth", payload: { email, password } });
    nonAdmin = `Bearer ${login.json().data.token}`;
  });

  type Route = [string, "GET" | "POST" | "PATCH" | "DELETE", (id: string) => string, object | undefined];
  const ROUTES: Route[] = [
    ["create", "POST", () => BASE, { url: "https://receiver.example/x" }],
    ["list", "GET", () => BASE, undefined],
    ["get", "GET", (id) => `${BASE}/${id}`, undefined],
    ["update", "PATCH", (id) => `${BASE}/${id}`, { description: "Hijacked" }],
    ["delete", "DELETE", (id) => `${BASE}/${id}`, undefined],
    ["rotate-secret", "POST", (id) => `${BASE}/${id}/rotate-secret`, undefined],
    ["deliveries", "GET", (id) => `${BASE}/${id}/deliveries`, undefined],
  ];

  it.each(ROUTES)("%s is 401 without a valid credential, even with a bad body", async (_name, method, url) => {
    const bad = method === "POST" || method === "PATCH" ? { payload: { bogus: true } } : {};
    for (const headers of [{}, { authorization: "ApiKey not-a-real-key" }, { authorization: "Bearer not.a.jwt" }]) {
      const res = await t.call({ method, url: url(hook.id), headers, ...bad });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe("unauthorized");
    }
  });

  it.each(ROUTES)("%s is 403 for a signed-in person without account.admin, before any lookup", async (...route) => {
    const [, method, url, payload] = route;
    for (const id of [hook.id, "wh_doesnotexist"]) {
      const res = await t.call({
        method,
        url: url(id),
        headers: { authorization: nonAdmin },
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("forbidden");
      expect(res.json().message).toContain("account.admin");
    }
    const { secret: _secret, ...record } = hook;
    expect((await get(owner, hook.id)).json().data).toEqual(record);
  });

  it("lets a signed-in account admin manage webhooks", async () => {
    const created = await t.call({
      method: "POST",
      url: BASE,
      headers: { authorization: owner.bearer },
      payload: { url: "https://receiver.example/by-a-person" },
    });
    expect(created.statusCode).toBe(201);
    const rotated = await t.call({
      method: "POST",
      url: `${BASE}/${created.json().data.id}/rotate-secret`,
      headers: { authorization: owner.bearer },
    });
    expect(rotated.statusCode).toBe(200);
  });

  it("answers 404 for another tenant's webhook on every route, changing nothing, and lists only the tenant's own", async () => {
    const stranger = await tenant();
    for (const [, method, url, payload] of ROUTES.filter(([, , url]) => url("x") !== url("y"))) {
      const res = await t.call({ method, url: url(hook.id), headers: auth(stranger), ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url(hook.id)}`).toBe(404);
      expect(res.json().code).toBe("not_found");
    }
    expect((await list(stranger)).json().pagination.total).toBe(0);
    const { secret: _secret, ...record } = hook;
    expect((await get(owner, hook.id)).json().data).toEqual(record);
  });
});
