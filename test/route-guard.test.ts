import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPermission, PERMISSIONS, type Permission } from "../src/features/auth/index.js";
import { raiseIssue } from "../src/features/issues/index.js";
import { createUser } from "../src/features/tenants/index.js";
import { ADMIN_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { seedCatalog } from "./helpers/catalog.js";
import {
  type JsonSchema,
  type OpenApiDocument,
  operationsOf,
  type Parameter,
  Prng,
  validValue,
} from "./helpers/fuzz-openapi.js";
import { clickOn, postbacksOf, setPostback } from "./helpers/source-postbacks.js";
import { convert, createHook, listEvents, WEBHOOK_ENV } from "./helpers/webhooks.js";

// A guard for every route, generated from the served OpenAPI document: every /api/v1 operation
// declares who may call it (`x-permission`: "public", "authenticated" or its permissions; a route
// that declares nothing fails here), and then answers
//   401 without a credential,
//   403 to a caller who holds everything but one of its declared permissions (and not 403 for a
//       permission to one who holds exactly the declared ones),
//   404 to another tenant for this tenant's ids in its path,
//   429 past the caller's request limit (each operation), and past the limits of their own
//       (sign-in failures, anonymous calls, webhook simulations: one representative each).
// Callers with chosen permission sets are people: an API key acts as account admin plus its
// scopes (docs/auth-and-tokens.md), so a key cannot lack a permission.

/** Each caller's requests per minute here: more than any caller below makes, few enough to spend quickly. */
const PER_MINUTE = 150;
const ANONYMOUS_PER_MINUTE = 60;
const ENV = {
  ...WEBHOOK_ENV,
  RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: String(ANONYMOUS_PER_MINUTE),
  LOGIN_FAILURES_PER_ACCOUNT: "2",
  SIMULATE_PER_WEBHOOK_PER_MINUTE: "1",
  // Requests without a credential are the point of the first check, not an attack.
  AUTH_FAILURES_PER_IP_PER_MINUTE: "100000",
  API_KEY_CACHE_TTL_S: "3600",
};
const SYSTEM = { type: "system", name: "route guard" } as const;

type Declared = "public" | "authenticated" | Permission | Permission[];

interface GuardedOperation {
  method: string;
  path: string;
  declared: unknown;
  parameters: Parameter[];
  body: JsonSchema | undefined;
  hasBody: boolean;
}

const label = (op: GuardedOperation) => `${op.method} ${op.path}`;

/** The permissions an operation declares; none for public and authenticated ones. */
function permissionsOf(op: GuardedOperation): Permission[] {
  const declared = op.declared as Declared;
  if (declared === "public" || declared === "authenticated") return [];
  return typeof declared === "string" ? [declared] : declared;
}

function isDeclared(value: unknown): value is Declared {
  if (value === "public" || value === "authenticated") return true;
  if (typeof value === "string") return isPermission(value);
  return Array.isArray(value) && value.length > 0 && value.every((p) => typeof p === "string" && isPermission(p));
}

const rng = new Prng(20_261_127);
const NO_IDS = { own: [], foreign: [], named: {} };

/** The request for `op`, path ids from `ids` (by the path segment before them) or ids that name nothing. */
function request(op: GuardedOperation, authorization: string | undefined, ids?: Record<string, string | number>) {
  const segments = op.path.split("/");
  const url = segments
    .map((segment, i) => {
      const name = /^\{(.+)\}$/.exec(segment)?.[1];
      if (name === undefined) return segment;
      const owner = segments[i - 1] ?? "";
      if (ids) {
        const id = ids[owner] ?? ids[name];
        if (id === undefined) throw new Error(`${label(op)}: no fixture id for {${name}} after '${owner}'; add one`);
        return encodeURIComponent(String(id));
      }
      const schema = op.parameters.find((p) => p.in === "path" && p.name === name)?.schema;
      return schema?.type === "integer" ? "999999999" : "zz_missing";
    })
    .join("/");
  const query = new URLSearchParams();
  for (const parameter of op.parameters) {
    if (parameter.in !== "query" || !parameter.required) continue;
    query.set(parameter.name, String(validValue(rng, parameter.schema, parameter.name, NO_IDS)));
  }
  const search = query.size > 0 ? `?${query}` : "";
  const options: InjectOptions = {
    method: op.method as NonNullable<InjectOptions["method"]>,
    url: `${url}${search}`,
    headers: authorization ? { authorization } : {},
    remoteAddress: "198.51.100.7",
  };
  const body = BODIES[label(op)] ?? (op.hasBody ? validValue(rng, op.body, "body", NO_IDS) : undefined);
  if (op.hasBody) options.payload = body as NonNullable<InjectOptions["payload"]>;
  return options;
}

/** Deletes that answer an unknown id with `deleted: false` rather than 404 (`anyPathId`; docs/api-conventions.md). */
const IDEMPOTENT_DELETES = new Set(["DELETE /api/v1/api-tokens/{id}"]);

/** Valid bodies where the generated one would be refused (400) before the path id is looked up. */
const BODIES: Record<string, unknown> = {
  "PATCH /api/v1/brands/{id}": { name: "Renamed" },
  "PATCH /api/v1/programs/{id}": { name: "Renamed" },
  "PATCH /api/v1/accounts/{id}": { name: "Renamed" },
  "PATCH /api/v1/links/{id}": { name: "Renamed" },
  "PATCH /api/v1/traffic-sources/{id}": { name: "Renamed" },
  // A generated body may carry `postback`, which also needs webhooks.update (source-postbacks/index.ts).
  "POST /api/v1/traffic-sources": { name: "Guard source" },
  "PATCH /api/v1/trackers/{id}": { name: "Renamed tracker" },
  "PATCH /api/v1/conversions/outgoing/webhooks/settings/{id}": { name: "Renamed" },
  "POST /api/v1/conversions/outgoing/webhooks/settings/{id}/simulate": {},
  "PATCH /api/v1/notifications/webhooks/{id}": { description: "Renamed" },
  "PATCH /api/v1/saved-reports/{id}": { name: "Renamed view" },
  "PUT /api/v1/traffic-sources/{id}/google-ads": {
    accountId: "1234567890",
    credentials: { clientId: "client.apps.example", clientSecret: "secret-0123", refreshToken: "refresh-0123" },
    conversionActions: { Signup: "111" },
    enabled: false,
  },
};

describe("every /api/v1 operation", { timeout: 120_000 }, () => {
  let t: TestApp;
  let owner: Tenancy;
  let operations: GuardedOperation[];
  /** The owner's ids, by the path segment before them (`brands` for /brands/{id}). */
  const ids: Record<string, string | number> = {};

  /** A person of `tenantId` holding `permissions`, with a bearer signed for them (no sign-in: no password check). */
  async function person(tenantId: string, permissions: Permission[]): Promise<{ id: string; bearer: string }> {
    const now = t.clock.now();
    const user = await createUser(
      t.ctx.db,
      tenantId,
      {
        email: `guard-${Math.random().toString(36).slice(2)}@example.com`,
        password: "correct horse battery",
        name: "Guard",
        permissions,
      },
      SYSTEM,
      now,
    );
    const { token } = await t.ctx.jwt.sign({ userId: user.id, tenantId }, now);
    return { id: user.id, bearer: `Bearer ${token}` };
  }

  /** Gives the person these permissions through the operator API (applies from their next request). */
  async function grant(who: { id: string }, permissions: Permission[]): Promise<void> {
    const res = await t.call({
      method: "PATCH",
      url: `/api/admin/users/${who.id}`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: { permissions },
    });
    expect(res.statusCode, res.body).toBe(200);
  }

  beforeAll(async () => {
    t = await startTestApp({ env: ENV, app: { clicks: { intervalMs: 3_600_000 } } });
    const doc = (
      await t.call({ method: "GET", url: "/api/swagger/v1/swagger.json" })
    ).json() as unknown as OpenApiDocument;
    operations = operationsOf(doc)
      .filter((op) => op.path.startsWith("/api/v1/"))
      .map((op) => ({
        ...op,
        declared: (doc.paths[op.path]?.[op.method.toLowerCase()] as Record<string, unknown> | undefined)?.[
          "x-permission"
        ],
      }))
      // Sign-out last: it ends the caller's session.
      .sort((a, b) => Number(label(a) === "DELETE /api/v1/auth") - Number(label(b) === "DELETE /api/v1/auth"));

    // The owner's rows, one of each kind a path can name.
    owner = await seedTenancy(t);
    const cat = await seedCatalog(t, owner);
    const trackerRes = await t.call({
      method: "POST",
      url: "/api/v1/trackers",
      headers: { authorization: owner.apiKey },
      payload: { name: "guard-tracker" },
    });
    const hook = await createHook(t, owner, { url: "http://127.0.0.1:9/hook?c={conversionId}" });
    await setPostback(t, owner, cat.trafficSourceId, "zid", { url: "http://127.0.0.1:9/pb?c={conversionId}" });
    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=z-1");
    const conversionId = await convert(t, owner, { type: "Signup", clickId });
    const [event] = await listEvents(t, owner);
    const [postback] = await postbacksOf(t, owner, cat.trafficSourceId);
    const notification = await t.call({
      method: "POST",
      url: "/api/v1/notifications/webhooks",
      headers: { authorization: owner.apiKey },
      payload: { url: "http://127.0.0.1:9/ops" },
    });
    const { issue } = await raiseIssue(
      t.ctx.db,
      {
        tenantId: owner.tenantId,
        kind: "api_token_expiring",
        severity: "warning",
        title: "Guard",
        subject: { type: "api_token", id: owner.apiKeyId, name: "Guard key" },
        details: {},
      },
      t.clock.now(),
    );
    const savedReport = await t.call({
      method: "POST",
      url: "/api/v1/saved-reports",
      headers: { authorization: owner.apiKey },
      payload: { name: "Guard view", report: "performance" },
    });
    const audit = await t.call({ method: "GET", url: "/api/v1/audit-log", headers: { authorization: owner.apiKey } });
    Object.assign(ids, {
      "api-tokens": owner.apiKeyId,
      users: owner.userId,
      "audit-log": audit.json().data[0].id,
      issues: issue.id,
      brands: cat.brandId,
      programs: cat.programId,
      accounts: cat.accountId,
      links: cat.linkId,
      "traffic-sources": cat.trafficSourceId,
      trackers: trackerRes.json().data.id,
      "brand-link": cat.linkId,
      "traffic-source": cat.trafficSourceId,
      conversions: conversionId,
      clicks: clickId,
      settings: hook.id,
      events: event?.id,
      postbacks: postback?.id,
      // No upload without Google: the source's id decides, as the route looks the source up first.
      uploads: "gup_0000000000000000000000000",
      webhooks: notification.json().data.id,
      "saved-reports": savedReport.json().data.id,
    });
  }, 120_000);
  afterAll(() => t?.close());

  it("declares who may call each one, as x-permission in the document", () => {
    expect(operations.length).toBeGreaterThan(80);
    const undeclared = operations.filter((op) => !isDeclared(op.declared)).map(label);
    expect(undeclared, "operations without a declared permission (config.permission, public or anyCaller)").toEqual([]);
    expect(operations.filter((op) => op.declared === "public").map(label)).toEqual(["POST /api/v1/auth"]);
  });

  it("answers 401 to a request without a credential", async () => {
    for (const op of operations.filter((o) => o.declared !== "public")) {
      const res = await t.call(request(op, undefined));
      expect(res.statusCode, `${label(op)}: ${res.body}`).toBe(401);
    }
  });

  it("answers 403 to a caller lacking one of the declared permissions, and never to one holding them", async () => {
    // One person whose permissions change between rounds: a person costs a password hash.
    const caller = await person(owner.tenantId, []);
    const guarded = operations.filter((o) => o.declared !== "public");
    for (const missing of new Set(guarded.flatMap(permissionsOf))) {
      // account.admin implies the others but two, so whoever lacks any other lacks it too.
      await grant(
        caller,
        PERMISSIONS.filter(
          (p) =>
            p !== missing && (p !== "account.admin" || ["traffic-sources.delete", "reports.update"].includes(missing)),
        ),
      );
      for (const op of guarded.filter((o) => permissionsOf(o).includes(missing))) {
        const res = await t.call(request(op, caller.bearer));
        expect(res.statusCode, `${label(op)} without ${missing}: ${res.body}`).toBe(403);
        expect(res.json().message).toBe(`Missing permission '${missing}'`);
      }
    }
    // By permission set, sign-out (which ends the caller's session) last of all.
    const sets = new Map<string, Permission[]>(guarded.map((op) => [permissionsOf(op).join(","), permissionsOf(op)]));
    const signOut = guarded.filter((o) => label(o) === "DELETE /api/v1/auth");
    for (const [key, declared] of [...sets, ["", []] as const]) {
      await grant(caller, [...declared]);
      const last = key === "" && declared !== sets.get("");
      const round = last ? signOut : guarded.filter((o) => permissionsOf(o).join(",") === key && !signOut.includes(o));
      for (const op of round) {
        const allowed = await t.call(request(op, caller.bearer));
        expect(allowed.statusCode, `${label(op)} with ${key || "no permission"}: ${allowed.body}`).not.toBe(401);
        if (allowed.statusCode === 403) expect(allowed.json().message, label(op)).not.toMatch(/permission/i);
      }
    }
  });

  it("answers 404 to another tenant for this tenant's ids", async () => {
    const { bearer: stranger } = await person((await seedTenancy(t)).tenantId, [
      "account.admin",
      "traffic-sources.delete",
      "reports.update",
    ]);
    const withIds = operations.filter((op) => op.parameters.some((p) => p.in === "path"));
    expect(withIds.length).toBeGreaterThan(30);
    for (const op of withIds) {
      const res = await t.call(request(op, stranger, ids));
      if (IDEMPOTENT_DELETES.has(label(op))) {
        // Answers any id itself: for another tenant's, that nothing was deleted.
        expect(res.statusCode, `${label(op)}: ${res.body}`).toBe(200);
        expect(res.json().data.deleted, label(op)).toBe(false);
      } else {
        expect(res.statusCode, `${label(op)}: ${res.body}`).toBe(404);
      }
    }
    expect(
      (await t.call({ method: "GET", url: "/api/v1/me", headers: { authorization: owner.bearer } })).statusCode,
    ).toBe(200);
    expect(
      (await t.call({ method: "GET", url: "/api/v1/api-tokens/scopes", headers: { authorization: owner.apiKey } }))
        .statusCode,
    ).toBe(200);
    // Nothing of the owner's changed: its rows are all still there.
    const source = await t.call({
      method: "GET",
      url: `/api/v1/traffic-sources/${ids["traffic-sources"]}`,
      headers: { authorization: owner.apiKey },
    });
    expect(source.json().data.name).toBe("Source");
  });

  it("answers 429 past the caller's limit, on every operation", async () => {
    const { bearer: spent } = await person(owner.tenantId, [
      "account.admin",
      "traffic-sources.delete",
      "reports.update",
    ]);
    for (let i = 0; i < PER_MINUTE; i++) {
      const res = await t.call({ method: "GET", url: "/api/v1/me", headers: { authorization: spent } });
      expect(res.statusCode).toBe(200);
    }
    for (const op of operations.filter((o) => o.declared !== "public")) {
      const res = await t.call(request(op, spent));
      expect(res.statusCode, `${label(op)}: ${res.body}`).toBe(429);
      expect(res.headers["retry-after"], label(op)).toBeDefined();
    }
  });

  it("answers 429 past the limits of their own: anonymous calls, failed sign-ins, webhook simulations", async () => {
    // Anonymous calls, per address (the public operation).
    const signIn = (payload: unknown, remoteAddress: string) =>
      t.call({ method: "POST", url: "/api/v1/auth", payload: payload as object, remoteAddress });
    for (let i = 0; i < ANONYMOUS_PER_MINUTE; i++) expect((await signIn({}, "203.0.113.50")).statusCode).toBe(400);
    const anonymous = await signIn({ email: owner.email, password: owner.password }, "203.0.113.50");
    expect(anonymous.statusCode).toBe(429);
    expect(anonymous.headers["retry-after"]).toBeDefined();

    // Failed sign-ins, per account: then even the right password is refused.
    for (let i = 0; i < 2; i++) {
      expect((await signIn({ email: owner.email, password: "wrong password" }, "203.0.113.51")).statusCode).toBe(401);
    }
    const failures = await signIn({ email: owner.email, password: owner.password }, "203.0.113.52");
    expect(failures.statusCode).toBe(429);
    expect(failures.headers["retry-after"]).toBeDefined();

    // Webhook simulations, per webhook.
    const simulate = () =>
      t.call({
        method: "POST",
        url: `/api/v1/conversions/outgoing/webhooks/settings/${ids.settings}/simulate`,
        headers: { authorization: owner.apiKey },
        payload: {},
      });
    expect((await simulate()).statusCode).not.toBe(429);
    const simulated = await simulate();
    expect(simulated.statusCode).toBe(429);
    expect(simulated.headers["retry-after"]).toBeDefined();
  });
});
