import { randomBytes } from "node:crypto";
import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emitNotification } from "../src/features/notifications/index.js";
import { ADMIN_KEY, HEALTH_KEY, startTestApp, type TestApp } from "./helpers/app.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";

/**
 * Every kind of secret the service knows is created, used right and wrong (header, query,
 * path), while the log is captured at trace level. No secret may show in any log line, nor in
 * any answer after the one that hands it out.
 */

const METRICS_KEY = "metrics-key-for-the-secrets-test-0123";
const lines: string[] = [];
const answers: string[] = [];
let t: TestApp;
let rx: Receiver;

interface Secret {
  label: string;
  value: string;
  /** Index into `answers` of the answer that handed it out; -1: configured, never handed out. */
  shownAt: number;
  /** Shown back on purpose in later answers (a receiver URL the tenant registered). */
  ownConfig?: boolean;
}
const secrets: Secret[] = [];

function remember(label: string, value: string, extra: Partial<Secret> = {}): string {
  expect(value.length).toBeGreaterThan(8);
  secrets.push({ label, value, shownAt: answers.length - 1, ...extra });
  return value;
}

async function call(options: InjectOptions) {
  const res = await t.call(options);
  answers.push(`${JSON.stringify(res.headers)}\n${res.body}`);
  return res;
}

const enc = encodeURIComponent;

function variants(value: string): string[] {
  return [...new Set([value, value.toLowerCase(), value.toUpperCase(), enc(value), enc(value).toLowerCase()])];
}

beforeAll(async () => {
  rx = await startReceiver();
  t = await startTestApp({
    env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", METRICS_KEY },
    app: {
      logger: {
        level: "trace",
        stream: {
          write(line: string) {
            lines.push(line);
          },
        },
      },
    },
  });
  secrets.push(
    { label: "admin key", value: ADMIN_KEY, shownAt: -1 },
    { label: "health key", value: HEALTH_KEY, shownAt: -1 },
    { label: "metrics key", value: METRICS_KEY, shownAt: -1 },
  );
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

describe("no secret in any log line or later answer", () => {
  it("creates and uses every kind of secret, right and wrong", async () => {
    const admin = { authorization: `Bearer ${ADMIN_KEY}` };

    // Admin key: right, wrong, bare, in the query; the admin document too.
    expect((await call({ method: "GET", url: "/api/admin/tenants", headers: admin })).statusCode).toBe(200);
    expect((await call({ method: "GET", url: "/api/swagger/admin/swagger.json", headers: admin })).statusCode).toBe(
      200,
    );
    for (const headers of [
      { authorization: `Bearer ${ADMIN_KEY}x` },
      { authorization: ADMIN_KEY },
      { authorization: `ApiKey ${ADMIN_KEY}` },
    ]) {
      expect((await call({ method: "GET", url: "/api/admin/tenants", headers })).statusCode).toBe(401);
      expect((await call({ method: "GET", url: "/api/v1/me", headers })).statusCode).toBe(401);
    }
    expect((await call({ method: "GET", url: `/api/admin/tenants?key=${enc(ADMIN_KEY)}` })).statusCode).toBe(401);
    expect(
      (await call({ method: "GET", url: `/api/swagger/admin/swagger.json?apiKey=${enc(ADMIN_KEY)}` })).statusCode,
    ).toBe(401);

    // Tenant (postback key handed out) and a person with a random password, through the admin API.
    const tenant = await call({
      method: "POST",
      url: "/api/admin/tenants",
      headers: admin,
      payload: { name: "Leaky" },
    });
    expect(tenant.statusCode, tenant.body).toBe(201);
    const tenantId: string = tenant.json().data.id;
    remember("postback key (creation)", tenant.json().data.postbackKey);
    const password = remember("password", `Pw/${randomBytes(18).toString("base64")}`, { shownAt: -1 });
    const email = `leaky-${Date.now()}@example.com`;
    const user = await call({
      method: "POST",
      url: `/api/admin/tenants/${tenantId}/users`,
      headers: admin,
      payload: { email, password, name: "Leaky Person", permissions: ["account.admin"] },
    });
    expect(user.statusCode, user.body).toBe(201);

    // Password: right, wrong, in the query, as Basic credentials.
    expect(
      (await call({ method: "POST", url: "/api/v1/auth", payload: { email, password: `${password}x` } })).statusCode,
    ).toBe(401);
    expect(
      (
        await call({
          method: "POST",
          url: `/api/v1/auth?password=${enc(password)}`,
          payload: { email, password: "nope" },
        })
      ).statusCode,
    ).toBe(401);
    const basic = Buffer.from(`${email}:${password}`).toString("base64");
    expect(
      (await call({ method: "GET", url: "/api/v1/me", headers: { authorization: `Basic ${basic}` } })).statusCode,
    ).toBe(401);
    const login = await call({ method: "POST", url: "/api/v1/auth", payload: { email, password } });
    expect(login.statusCode, login.body).toBe(200);
    const jwt = remember("JWT", login.json().data.token);
    const bearer = { authorization: `Bearer ${jwt}` };

    // JWT: right, tampered, bare, in the query and the path.
    expect((await call({ method: "GET", url: "/api/v1/me", headers: bearer })).statusCode).toBe(200);
    for (const headers of [
      { authorization: `Bearer ${jwt}x` },
      { authorization: jwt },
      { authorization: `Token ${jwt}` },
    ]) {
      expect((await call({ method: "GET", url: "/api/v1/me", headers })).statusCode).toBe(401);
    }
    expect((await call({ method: "GET", url: `/api/v1/me?access_token=${jwt}` })).statusCode).toBe(401);
    expect((await call({ method: "GET", url: `/api/v1/api-tokens/${jwt}` })).statusCode).toBe(401);

    // API key, created through the API: right, wrong, bare, other header, query and path.
    const created = await call({
      method: "POST",
      url: "/api/v1/api-tokens",
      headers: bearer,
      payload: { name: "leaky" },
    });
    expect(created.statusCode, created.body).toBe(201);
    const apiKey = remember("API key", created.json().data.token);
    expect(
      (await call({ method: "GET", url: "/api/v1/api-tokens", headers: { authorization: `ApiKey ${apiKey}` } }))
        .statusCode,
    ).toBe(200);
    for (const headers of [
      { authorization: `ApiKey ${apiKey}x` },
      { authorization: apiKey },
      { authorization: `Bearer ${apiKey}` },
      { "x-api-key": apiKey },
    ]) {
      expect((await call({ method: "GET", url: "/api/v1/api-tokens", headers })).statusCode).toBe(401);
    }
    for (const name of ["apiKey", "api_key", "token", "key", "Authorization"]) {
      expect((await call({ method: "GET", url: `/api/v1/api-tokens?${name}=${enc(apiKey)}&limit=5` })).statusCode).toBe(
        401,
      );
    }
    expect((await call({ method: "GET", url: `/api/v1/api-tokens/${enc(apiKey)}` })).statusCode).toBe(401);
    expect((await call({ method: "GET", url: `/postback/${enc(apiKey)}?clickId=x` })).statusCode).toBe(404);

    // Postback key, rotated through the API: right (GET and POST), wrong, in the query.
    const rotated = await call({ method: "POST", url: "/api/v1/settings/postback-key", headers: bearer });
    expect(rotated.statusCode, rotated.body).toBe(201);
    const postbackKey = remember("postback key (rotated)", rotated.json().data.postbackKey);
    const right = await call({ method: "GET", url: `/postback/${postbackKey}?clickId=clk_unknown&type=Deposit` });
    expect(right.body).not.toContain("Unknown postback key");
    await call({
      method: "POST",
      url: `/postback/${postbackKey}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: "clickId=clk_unknown&type=Deposit&value=10",
    });
    expect((await call({ method: "GET", url: `/postback/${postbackKey}zz?clickId=x` })).statusCode).toBe(404);
    // Not a postback route: the dashboard's page (not recorded as an answer, it may name the path).
    const stray = await t.call({ method: "GET", url: `//postback//${postbackKey}?clickId=x` });
    expect(stray.statusCode).not.toBe(500);
    expect((await call({ method: "GET", url: `/postback?key=${postbackKey}` })).statusCode).toBe(404);
    expect((await call({ method: "GET", url: `/go/x?postbackKey=${postbackKey}` })).statusCode).toBeGreaterThan(0);

    // Operational webhook signing secrets: created, rotated, used to sign a real delivery, and
    // sent where they do not belong. The receiver's URL carries a secret of its own in its query.
    const receiverSecret = remember("receiver URL secret", `rx-${randomBytes(12).toString("hex")}`, {
      ownConfig: true,
    });
    const hook = await call({
      method: "POST",
      url: "/api/v1/notifications/webhooks",
      headers: bearer,
      payload: { url: `${rx.base}/ops?token=${receiverSecret}` },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    remember("signing secret (creation)", hook.json().data.secret);
    const hookId: string = hook.json().data.id;
    const rotation = await call({
      method: "POST",
      url: `/api/v1/notifications/webhooks/${hookId}/rotate-secret`,
      headers: bearer,
    });
    expect(rotation.statusCode, rotation.body).toBe(200);
    const signingSecret = remember("signing secret (rotated)", rotation.json().data.secret);
    expect(signingSecret).toMatch(/^whsec_/);
    await t.ctx.db.transaction((tx) =>
      emitNotification(tx, tenantId, "issue.opened", { id: "iss_leak" }, t.clock.now()),
    );
    await t.ctx.notifications.worker.tick();
    expect(rx.at("/ops").length).toBe(1);
    expect(
      (await call({ method: "GET", url: "/api/v1/me", headers: { authorization: `Bearer ${signingSecret}` } }))
        .statusCode,
    ).toBe(401);
    expect(
      (await call({ method: "GET", url: "/api/v1/me", headers: { authorization: signingSecret } })).statusCode,
    ).toBe(401);
    await call({ method: "GET", url: `/api/v1/notifications/webhooks?secret=${enc(signingSecret)}`, headers: bearer });
    for (const path of [`/api/v1/notifications/webhooks/${hookId}`, "/api/v1/notifications/webhooks"]) {
      expect((await call({ method: "GET", url: path, headers: bearer })).statusCode).toBe(200);
    }

    // Health and metrics keys: right, wrong, in the query.
    expect(
      (await call({ method: "GET", url: "/api/health/detailed", headers: { "x-health-key": HEALTH_KEY } })).statusCode,
    ).toBe(200);
    expect(
      (await call({ method: "GET", url: "/api/health/detailed", headers: { "x-health-key": `${HEALTH_KEY}x` } }))
        .statusCode,
    ).toBe(401);
    expect((await call({ method: "GET", url: `/api/health/detailed?key=${HEALTH_KEY}` })).statusCode).toBe(401);
    expect(
      (await call({ method: "GET", url: "/metrics", headers: { authorization: `Bearer ${METRICS_KEY}` } })).statusCode,
    ).toBe(200);
    expect(
      (await call({ method: "GET", url: "/metrics", headers: { authorization: `Bearer ${METRICS_KEY}x` } })).statusCode,
    ).toBe(401);
    expect((await call({ method: "GET", url: `/metrics?key=${METRICS_KEY}` })).statusCode).toBe(401);
    expect(
      (await call({ method: "GET", url: "/metrics", headers: { authorization: `Bearer ${HEALTH_KEY}` } })).statusCode,
    ).toBe(401);

    // Lines written outside a request, as workers and the mailer write them.
    t.app.log.info(
      { body: `urlTemplate: https://hooks.example/in?clickId=1&token=${receiverSecret}`, to: ["a@example.com"] },
      "mail (no SMTP_URL: kept in the outbox)",
    );
    t.app.log.error(
      { err: new Error(`request to https://user:${password}@hooks.example/?api_key=${enc(apiKey)} failed`) },
      `retrying with Authorization: ApiKey ${apiKey}`,
    );
    t.app.log.warn({
      headers: { authorization: `Bearer ${jwt}`, cookie: `session=${jwt}`, "x-health-key": HEALTH_KEY },
    });
    t.app.log.info({ leaked: { deep: [postbackKey, signingSecret] } }, "values of every shape");
  });

  it("wrote the requests to the log, with the secrets redacted and the rest readable", () => {
    const log = lines.join("");
    expect(lines.length).toBeGreaterThan(50);
    expect(log).toContain('"url":"/postback/[redacted]?clickId=clk_unknown&type=Deposit"');
    expect(log).toContain("/api/v1/api-tokens?apiKey=[redacted]&limit=5");
    expect(log).toContain("https://hooks.example/in?clickId=1&token=[redacted]");
    expect(log).toMatch(/"msg":"incoming request"/);
  });

  it("shows no secret in any log line", () => {
    expect(secrets.length).toBeGreaterThanOrEqual(11);
    for (const [index, line] of lines.entries()) {
      for (const secret of secrets) {
        for (const variant of variants(secret.value)) {
          if (line.includes(variant)) throw new Error(`log line ${index} carries the ${secret.label}: ${line}`);
        }
      }
    }
  });

  it("shows no secret in any answer after the one that handed it out", () => {
    for (const secret of secrets) {
      if (secret.ownConfig) continue;
      answers.forEach((answer, index) => {
        if (index <= secret.shownAt) return;
        for (const variant of variants(secret.value)) {
          if (answer.includes(variant)) throw new Error(`answer ${index} carries the ${secret.label}: ${answer}`);
        }
      });
    }
  });
});
