import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { type AppOptions, buildApp } from "../../src/app.js";
import { type Config, loadConfig } from "../../src/config.js";
import type { AppContext } from "../../src/context.js";
import { createApiToken, type NewApiToken } from "../../src/features/api-tokens/index.js";
import type { Permission } from "../../src/features/auth/index.js";
import { createTenant, createUser } from "../../src/features/tenants/index.js";
import { ManualClock } from "../../src/platform/clock.js";
import { openTestDb, type TestDb } from "./db.js";

export const ADMIN_KEY = "test-admin-key-0123456789";
export const HEALTH_KEY = "test-health-key";
/** SECRETS_KEY of the test apps: one key, `test`, so nodes on one database open each other's secrets. */
export const TEST_SECRETS_KEY = `test:${Buffer.alloc(32, 1).toString("base64")}`;
const SYSTEM = { type: "system", name: "test" } as const;

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  clock: ManualClock;
  testDb: TestDb;
  /** app.inject with the JSON body parsed. */
  call(options: InjectOptions): Promise<LightMyRequestResponse & { body: string; json: () => EnvelopeBody }>;
  close(): Promise<void>;
}

export interface EnvelopeBody {
  code: string;
  message: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the route answered
  data: any;
  pagination?: { offset: number; limit: number; total: number };
}

export interface TestAppOptions {
  env?: Record<string, string>;
  app?: Partial<AppOptions>;
  /** Use this database instead of a fresh one (a second node on one PostgreSQL). */
  testDb?: TestDb;
}

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    ADMIN_API_KEY: ADMIN_KEY,
    HEALTH_KEY,
    SECRETS_KEY: TEST_SECRETS_KEY,
    SEED_DEMO: "false",
    LOG_LEVEL: "silent",
    // No test reaches the ECB: the exchange-rates job is off unless a test points it at loopback.
    FX_RATES_URL: "",
    ...env,
  });
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const testDb = options.testDb ?? (await openTestDb());
  const clock = new ManualClock();
  const { app, ctx } = await buildApp({
    config: testConfig(options.env),
    db: testDb.db,
    jwtSecret: "test-jwt-secret-that-is-long-enough-0123456789",
    clock,
    logger: false,
    healthCacheMs: 0,
    ...options.app,
  });
  await app.ready();
  return {
    app,
    ctx,
    clock,
    testDb,
    async call(request) {
      const response = await app.inject(request);
      return Object.assign(response, { json: () => JSON.parse(response.body) as EnvelopeBody });
    },
    async close() {
      await app.close();
      if (!options.testDb) await testDb.dispose();
    },
  };
}

export interface Tenancy {
  tenantId: string;
  userId: string;
  email: string;
  password: string;
  /** `Authorization` header values. */
  bearer: string;
  apiKey: string;
  apiKeyId: string;
  /** The tenant's postback secret (GET|POST /postback/{postbackKey}). */
  postbackKey: string;
}

let counter = 0;

/** A tenant with one person (given permissions) signed in, and one API key. */
export async function seedTenancy(
  t: TestApp,
  options: { permissions?: Permission[]; key?: Partial<NewApiToken> } = {},
): Promise<Tenancy> {
  counter += 1;
  const now = t.clock.now();
  const tenant = await createTenant(t.ctx.db, { name: `Tenant ${counter}` }, SYSTEM, now);
  const email = `person${counter}-${Date.now()}@example.com`;
  const password = "correct horse battery";
  const user = await createUser(
    t.ctx.db,
    tenant.id,
    { email, password, name: `Person ${counter}`, permissions: options.permissions ?? ["account.admin"] },
    SYSTEM,
    now,
  );
  const login = await t.call({ method: "POST", url: "/api/v1/auth", payload: { email, password } });
  const key = await createApiToken(
    t.ctx.db,
    tenant.id,
    { name: `Key ${counter}`, ...options.key },
    { type: "user", id: user.id, name: user.name },
    now,
  );
  return {
    tenantId: tenant.id,
    userId: user.id,
    email,
    password,
    bearer: `Bearer ${login.json().data.token}`,
    apiKey: `ApiKey ${key.token}`,
    apiKeyId: key.id,
    postbackKey: tenant.postbackKey,
  };
}

/** Another key on the tenant, created through the API with the person's bearer. */
export async function createKeyViaApi(t: TestApp, who: Tenancy, name: string): Promise<{ id: string; apiKey: string }> {
  const res = await t.call({
    method: "POST",
    url: "/api/v1/api-tokens",
    headers: { authorization: who.bearer },
    payload: { name },
  });
  if (res.statusCode !== 201) throw new Error(`creating key '${name}' answered ${res.statusCode}: ${res.body}`);
  const { id, token } = res.json().data;
  return { id, apiKey: `ApiKey ${token}` };
}
