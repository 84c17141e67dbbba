import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { secretsEqual } from "../../platform/crypto.js";
import { conflictResponses, Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { refusedInEnvelope } from "../../platform/http/rate-limit.js";
import { newId } from "../../platform/ids.js";
import { runJob } from "../../platform/jobs.js";
import type { Actor } from "../audit/index.js";
import { broadcastRevoked } from "../auth/index.js";
import { webhookUsage } from "../outgoing-webhooks/index.js";
import {
  createTenant,
  createUser,
  getTenant,
  listTenants,
  NewUserBody,
  TenantSchema,
  UserSchema,
  updateTenant,
  updateUser,
} from "../tenants/index.js";
import {
  CreatedTenant,
  JobInfo,
  JobName,
  JobRun,
  NewTenantBody,
  RunJobBody,
  TenantId,
  TenantListQuery,
  TenantPatchBody,
  UserIdParam,
  UserPatchBody,
  WebhookUsageQuery,
  WebhookUsageSchema,
} from "./schemas.js";

const ADMIN: Actor = { type: "admin" };
const security = [{ adminKey: [] }];

// The jobs count days and 64-day epochs from 1970: a manual run's `now` stays within this span.
const EARLIEST_JOB_INSTANT = new Date("1970-01-01T00:00:00Z");
const LATEST_JOB_INSTANT = new Date("9000-12-31T23:59:59.999Z");

/**
 * The admin key check, as an onRequest hook: the admin routes and the admin OpenAPI document
 * (which maps the whole operator surface) are both behind it.
 */
export function adminKeyGuard(adminKey: string): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  return async (request, reply) => {
    // Wrong credentials are counted per client IP; past the limit the address is refused (429)
    // even with the right key until the window ends, so guessing gains nothing by going on.
    const { limits } = request.server;
    const { adminFailuresPerMinute, windowMs } = limits.options;
    const failures = `admin-fail:ip:${request.ip}`;
    const budget = await limits.check(failures, adminFailuresPerMinute, windowMs);
    if (!budget.allowed) throw refusedInEnvelope(reply, budget, "failed admin credentials from this address");
    const header = request.headers.authorization ?? "";
    const [scheme, credential] = header.split(" ", 2);
    const isBearer = scheme?.toLowerCase() === "bearer" && Boolean(credential);
    if (!isBearer || !credential || !secretsEqual(credential, adminKey)) {
      // Only a guess counts: no header, another scheme or an empty bearer could never succeed.
      if (isBearer) await limits.fail(failures, windowMs);
      throw ApiError.unauthorized("Admin credential missing or wrong; send 'Authorization: Bearer <ADMIN_API_KEY>'");
    }
  };
}

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type AdminRouteDeps = Pick<AppContext, "db" | "clock" | "apiKeys" | "people" | "jobs" | "nodeId">;

/** The operator's surface under /api/admin; registered only when ADMIN_API_KEY is set. */
export function adminRoutes(ctx: AdminRouteDeps, adminKey: string): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook("onRequest", adminKeyGuard(adminKey));

    app.post(
      "/tenants",
      {
        schema: {
          tags: ["Tenants"],
          summary: "Create a tenant",
          security,
          body: NewTenantBody,
          response: { 201: Envelope(CreatedTenant), ...errorResponses },
        },
      },
      async (request, reply) => {
        const tenant = await ctx.db.transaction((tx) => createTenant(tx, request.body, ADMIN, ctx.clock.now()));
        return reply.status(201).send(ok(tenant, "Created"));
      },
    );

    app.get(
      "/tenants",
      {
        schema: {
          tags: ["Tenants"],
          summary: "List tenants",
          security,
          querystring: TenantListQuery,
          response: { 200: PagedEnvelope(TenantSchema), ...errorResponses },
        },
      },
      async (request) => {
        const { items, total } = await listTenants(ctx.db, request.query);
        return paged(items, request.query, total);
      },
    );

    app.get(
      "/tenants/:id",
      {
        schema: {
          tags: ["Tenants"],
          summary: "One tenant",
          security,
          params: TenantId,
          response: { 200: Envelope(TenantSchema), ...errorResponses },
        },
      },
      async (request) => {
        const tenant = await getTenant(ctx.db, request.params.id);
        if (!tenant) throw ApiError.notFound("Tenant", request.params.id);
        return ok(tenant);
      },
    );

    app.get(
      "/tenants/:id/webhook-usage",
      {
        schema: {
          tags: ["Tenants"],
          summary: "A tenant's outgoing webhook postbacks counted against its monthly allowance",
          security,
          params: TenantId,
          querystring: WebhookUsageQuery,
          response: { 200: Envelope(WebhookUsageSchema), ...errorResponses },
        },
      },
      async (request) => {
        const month = request.query.month ?? ctx.clock.now().toISOString().slice(0, 7);
        const usage = await webhookUsage(ctx.db, request.params.id, month);
        if (!usage) throw ApiError.notFound("Tenant", request.params.id);
        return ok(usage);
      },
    );

    app.patch(
      "/tenants/:id",
      {
        schema: {
          tags: ["Tenants"],
          summary: "Change a tenant's name, entitlements or webhook allowance",
          security,
          params: TenantId,
          body: TenantPatchBody,
          response: { 200: Envelope(TenantSchema), ...errorResponses },
        },
      },
      async (request) => {
        // Cached keys and people carry the tenant's entitlements: every node drops them so the change applies at once.
        const tenant = await ctx.db.transaction(async (tx) => {
          const updated = await updateTenant(tx, request.params.id, request.body, ADMIN, ctx.clock.now());
          await broadcastRevoked(tx, { tenantId: updated.id });
          return updated;
        });
        ctx.apiKeys.forgetTenant(tenant.id);
        ctx.people.forgetTenant(tenant.id);
        return ok(tenant);
      },
    );

    app.post(
      "/tenants/:id/users",
      {
        schema: {
          tags: ["Users"],
          summary: "Create a person on a tenant",
          security,
          params: TenantId,
          body: NewUserBody,
          response: { 201: Envelope(UserSchema), ...conflictResponses },
        },
      },
      async (request, reply) => {
        const user = await ctx.db.transaction((tx) =>
          createUser(tx, request.params.id, request.body, ADMIN, ctx.clock.now()),
        );
        return reply.status(201).send(ok(user, "Created"));
      },
    );

    app.patch(
      "/users/:id",
      {
        schema: {
          tags: ["Users"],
          summary: "Disable or enable a person, rename them or change their permissions",
          security,
          params: UserIdParam,
          body: UserPatchBody,
          response: { 200: Envelope(UserSchema), ...errorResponses },
        },
      },
      async (request) => {
        // A signed-in person is cached on every node: all of them forget this one, so being
        // disabled or a change of permissions applies from the next request.
        const user = await ctx.db.transaction(async (tx) => {
          const updated = await updateUser(tx, request.params.id, request.body, ADMIN, ctx.clock.now());
          await broadcastRevoked(tx, { userId: updated.id });
          return updated;
        });
        ctx.people.forget(user.id);
        return ok(user);
      },
    );

    app.get(
      "/jobs",
      {
        schema: {
          tags: ["Jobs"],
          summary: "Scheduled jobs",
          security,
          response: { 200: Envelope(Type.Array(JobInfo)), ...errorResponses },
        },
      },
      async () => ok(ctx.jobs.list().map(({ name, description, cron }) => ({ name, description, cron }))),
    );

    app.post(
      "/jobs/:name/run",
      {
        schema: {
          tags: ["Jobs"],
          summary: "Run a scheduled job now, synchronously; manual runs are never skipped",
          security,
          params: JobName,
          body: RunJobBody,
          response: { 200: Envelope(JobRun), ...errorResponses },
        },
      },
      async (request) => {
        const job = ctx.jobs.find(request.params.name);
        if (!job) {
          const known = ctx.jobs.list().map((j) => j.name);
          throw new ApiError("not_found", `Unknown job '${request.params.name}'; known jobs: ${known.join(", ")}`);
        }
        const now = request.body?.now ? new Date(request.body.now) : ctx.clock.now();
        // The jobs count days and 64-day epochs from 1970; an instant outside this span has no
        // meaning for them (a run in year 1 would write days before the epoch).
        if (now < EARLIEST_JOB_INSTANT || now > LATEST_JOB_INSTANT) {
          throw ApiError.validation("now", "must be from 1970-01-01 to 9000-12-31 (UTC)");
        }
        const result = await runJob(ctx.db, job, {
          slot: `manual:${newId("run")}`,
          manual: true,
          nodeId: ctx.nodeId,
          now,
        });
        return ok(result);
      },
    );
  };
}
