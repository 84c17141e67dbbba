import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { conflictResponses, Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { AddressPolicy } from "../../platform/webhook-sender.js";
import { actorOf } from "../audit/index.js";
import { callerOf } from "../auth/index.js";
import { assertSimulable, simulate } from "./event-ops.js";
import {
  LIVE_PLACEHOLDERS,
  PlaceholderError,
  SIMULATE_ONLY_PLACEHOLDERS,
  tokens,
  validateTemplate,
} from "./placeholders.js";
import {
  NewWebhook,
  PlaceholderInfo,
  SimulateBody,
  ValidateAnswer,
  ValidateBody,
  Webhook,
  WebhookId,
  WebhookListQuery,
  WebhookPatch,
} from "./schemas.js";
import {
  checkSimulatedType,
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  type SettingsChange,
  simulatedType,
  updateWebhook,
} from "./settings-service.js";
import { blockedHostProblem, type HostScreen } from "./url-screen.js";

const BASE = "/conversions/outgoing/webhooks";
const TAG = "Outgoing conversion webhooks";

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type WebhookSettingsRouteDeps = Pick<AppContext, "db" | "clock" | "config">;

/** Settings of outgoing conversion webhooks (account-admin rights). */
export function webhookSettingsRoutes(ctx: WebhookSettingsRouteDeps): FastifyPluginAsyncTypebox {
  const config = { permission: "account.admin" } as const;
  const changeOf = (request: FastifyRequest): SettingsChange => {
    const caller = callerOf(request);
    return {
      tenantId: caller.tenantId,
      actor: actorOf(caller),
      at: ctx.clock.now(),
      clickWebhooks: caller.entitlements.clickWebhooks,
    };
  };

  // The send-time policy, so a URL saved is one that will not be refused for its address.
  const hostScreen: HostScreen = {
    policy: new AddressPolicy(ctx.config.webhookAllowedHosts),
    timeoutMs: ctx.config.webhookSaveDnsTimeoutMs,
  };
  // Checked before the transaction: the DNS lookup must not hold a database connection.
  const checkHost = async (url: string | undefined): Promise<void> => {
    if (url === undefined) return;
    const problem = await blockedHostProblem(url.trim(), hostScreen);
    if (problem !== null) throw ApiError.invalid("url", problem);
  };

  return async (app) => {
    app.post(
      `${BASE}/settings`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Create a webhook (5 per traffic source and 5 affiliate-level at most)",
          body: NewWebhook,
          response: { 201: Envelope(Webhook), ...conflictResponses },
        },
      },
      async (request, reply) => {
        const change = changeOf(request);
        await checkHost(request.body.url);
        const webhook = await ctx.db.transaction((tx) => createWebhook(tx, request.body, change));
        return reply.status(201).send(ok(webhook, "Created"));
      },
    );

    app.get(
      `${BASE}/settings`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "The tenant's webhooks, oldest first",
          querystring: WebhookListQuery,
          response: { 200: PagedEnvelope(Webhook), ...errorResponses },
        },
      },
      async (request) => {
        const { items, total } = await listWebhooks(ctx.db, callerOf(request).tenantId, request.query);
        return paged(items, request.query, total);
      },
    );

    app.get(
      `${BASE}/settings/:id`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "One webhook",
          params: WebhookId,
          response: { 200: Envelope(Webhook), ...errorResponses },
        },
      },
      async (request) => {
        const webhook = await getWebhook(ctx.db, callerOf(request).tenantId, request.params.id);
        if (!webhook) throw ApiError.notFound("Webhook", request.params.id);
        return ok(webhook);
      },
    );

    app.patch(
      `${BASE}/settings/:id`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Change a webhook; status Enabled re-enables a Suspended one",
          params: WebhookId,
          body: WebhookPatch,
          response: { 200: Envelope(Webhook), ...conflictResponses },
        },
      },
      async (request) => {
        const change = changeOf(request);
        await checkHost(request.body.url);
        const webhook = await ctx.db.transaction((tx) => updateWebhook(tx, request.params.id, request.body, change));
        if (!webhook) throw ApiError.notFound("Webhook", request.params.id);
        return ok(webhook, "Updated");
      },
    );

    app.delete(
      `${BASE}/settings/:id`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Delete a webhook",
          params: WebhookId,
          response: { 200: Envelope(Type.Object({ id: Type.String(), deleted: Type.Boolean() })), ...errorResponses },
        },
      },
      async (request) => {
        const change = changeOf(request);
        const deleted = await ctx.db.transaction((tx) => deleteWebhook(tx, request.params.id, change));
        if (!deleted) throw ApiError.notFound("Webhook", request.params.id);
        return ok({ id: request.params.id, deleted }, "Deleted");
      },
    );

    app.post(
      `${BASE}/settings/:id/simulate`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Send a sample conversion to the webhook; the outcome shows in its delivery log, marked simulated",
          description:
            "A Disabled or Suspended webhook sends nothing: simulating one is refused with 409 conflict. The " +
            "sample's conversionId, clickId and externalClickId start with `sim_`, so a receiver can tell it " +
            "from a real delivery. Each webhook " +
            "takes a few simulations per minute (10 by default); past that, 429 with Retry-After.",
          params: WebhookId,
          body: SimulateBody,
          response: { 202: Envelope(Type.Object({ eventId: Type.String() })), ...conflictResponses },
        },
        // The body is optional: no body is the same as {}.
        preValidation: (request, _reply, done) => {
          request.body ??= {};
          done();
        },
      },
      async (request, reply) => {
        const change = changeOf(request);
        const webhook = await getWebhook(ctx.db, change.tenantId, request.params.id);
        if (!webhook) throw ApiError.notFound("Webhook", request.params.id);
        const type = request.body.conversionType ?? simulatedType(webhook.conversionTypes);
        checkSimulatedType(type, change.clickWebhooks);
        // Refused before the budget is spent (simulate checks again under the row lock).
        assertSimulable(webhook.status, webhook.id);
        // Each simulation sends a real request outside the monthly allowance: a small budget per
        // webhook, spent only by simulations that will be sent.
        await app.limits.takeTrialSend(reply, `simulate:${webhook.id}`, "simulations of this webhook");
        const eventId = await ctx.db.transaction((tx) => simulate(tx, change.tenantId, webhook.id, type, change.at));
        return reply.status(202).send(ok({ eventId }, "Request sent"));
      },
    );

    app.post(
      `${BASE}/settings/validate`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Check a URL template without saving it: the placeholder or host at fault, or the sample URL",
          description:
            "valid:false also for a host that deliveries would be refused for: a private, loopback or reserved " +
            "address, or a name that resolves only to such addresses, unless WEBHOOK_ALLOWED_HOSTS allows it.",
          body: ValidateBody,
          response: { 200: Envelope(ValidateAnswer), ...errorResponses },
        },
      },
      async (request) => {
        try {
          const sampleUrl = validateTemplate(request.body.url);
          const blocked = await blockedHostProblem(request.body.url.trim(), hostScreen);
          if (blocked !== null) return ok({ valid: false, message: blocked, placeholder: null, sampleUrl: null });
          const count = tokens(request.body.url).length;
          return ok({ valid: true, message: `Valid: ${count} placeholder(s)`, placeholder: null, sampleUrl });
        } catch (error) {
          if (!(error instanceof PlaceholderError)) throw error;
          return ok({ valid: false, message: error.message, placeholder: error.placeholder, sampleUrl: null });
        }
      },
    );

    app.get(
      `${BASE}/placeholders`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Placeholder names a URL template may use (case-insensitive)",
          response: { 200: Envelope(Type.Array(PlaceholderInfo)), ...errorResponses },
        },
      },
      async () =>
        ok([
          ...LIVE_PLACEHOLDERS.map((name) => ({ name, simulateOnly: false })),
          ...SIMULATE_ONLY_PLACEHOLDERS.map((name) => ({ name, simulateOnly: true })),
        ]),
    );
  };
}
