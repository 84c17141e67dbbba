import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import {
  conflictResponses,
  Envelope,
  errorResponses,
  ok,
  PagedEnvelope,
  PageQuery,
  paged,
} from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { actorOf } from "../audit/index.js";
import { callerOf } from "../auth/index.js";
import { listDeliveries } from "./history.js";
import {
  Delivery,
  DeliveryQuery,
  NewNotificationWebhook,
  NotificationTest,
  NotificationWebhook,
  NotificationWebhookPatch,
  NotificationWebhookWithSecret,
  WebhookId,
} from "./schemas.js";
import {
  createNotificationWebhook,
  deleteNotificationWebhook,
  getNotificationWebhook,
  listNotificationWebhooks,
  type RegistrationChange,
  rotateSecret,
  updateNotificationWebhook,
} from "./service.js";
import { auditTestMessage, sendTestMessage } from "./test-send.js";

const BASE = "/notifications/webhooks";
const TAG = "Operational webhooks";

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type NotificationRouteDeps = Pick<AppContext, "db" | "clock" | "notifications" | "config">;

/** Registration of operational webhooks and their delivery history (account-admin, as webhook settings). */
export function notificationRoutes(ctx: NotificationRouteDeps): FastifyPluginAsyncTypebox {
  const config = { permission: "account.admin" } as const;
  const changeOf = (request: FastifyRequest): RegistrationChange => {
    const caller = callerOf(request);
    return {
      tenantId: caller.tenantId,
      actor: actorOf(caller),
      at: ctx.clock.now(),
      policy: ctx.notifications.policy,
      box: ctx.notifications.box,
    };
  };

  return async (app) => {
    app.post(
      BASE,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Register a webhook for signed operational events; the answer shows its signing secret once",
          body: NewNotificationWebhook,
          response: { 201: Envelope(NotificationWebhookWithSecret), ...conflictResponses },
        },
      },
      async (request, reply) => {
        const change = changeOf(request);
        const webhook = await ctx.db.transaction((tx) => createNotificationWebhook(tx, request.body, change));
        return reply.status(201).send(ok(webhook, "Created"));
      },
    );

    app.get(
      BASE,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "The tenant's operational webhooks, oldest first",
          querystring: Type.Object(PageQuery.properties, { additionalProperties: false }),
          response: { 200: PagedEnvelope(NotificationWebhook), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        const { items, total } = await listNotificationWebhooks(
          ctx.db,
          tenantId,
          request.query,
          ctx.clock.now(),
          ctx.notifications.box,
        );
        return paged(items, request.query, total);
      },
    );

    app.get(
      `${BASE}/:id`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "One operational webhook (never its secret)",
          params: WebhookId,
          response: { 200: Envelope(NotificationWebhook), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        const at = ctx.clock.now();
        const webhook = await getNotificationWebhook(ctx.db, tenantId, request.params.id, at, ctx.notifications.box);
        if (!webhook) throw ApiError.notFound("Webhook", request.params.id);
        return ok(webhook);
      },
    );

    app.patch(
      `${BASE}/:id`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Change a webhook's URL, event filter or description",
          params: WebhookId,
          body: NotificationWebhookPatch,
          response: { 200: Envelope(NotificationWebhook), ...errorResponses },
        },
      },
      async (request) => {
        const change = changeOf(request);
        const webhook = await ctx.db.transaction((tx) =>
          updateNotificationWebhook(tx, request.params.id, request.body, change),
        );
        if (!webhook) throw ApiError.notFound("Webhook", request.params.id);
        return ok(webhook, "Updated");
      },
    );

    app.delete(
      `${BASE}/:id`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Delete a webhook with its delivery history; messages not yet sent are dropped",
          params: WebhookId,
          response: { 200: Envelope(Type.Object({ id: Type.String(), deleted: Type.Boolean() })), ...errorResponses },
        },
      },
      async (request) => {
        const change = changeOf(request);
        const deleted = await ctx.db.transaction((tx) => deleteNotificationWebhook(tx, request.params.id, change));
        if (!deleted) throw ApiError.notFound("Webhook", request.params.id);
        return ok({ id: request.params.id, deleted }, "Deleted");
      },
    );

    app.post(
      `${BASE}/:id/rotate-secret`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Issue a new signing secret (shown once); the old one keeps signing alongside it for 24 hours",
          params: WebhookId,
          response: { 200: Envelope(NotificationWebhookWithSecret), ...errorResponses },
        },
      },
      async (request) => {
        const change = changeOf(request);
        const webhook = await ctx.db.transaction((tx) => rotateSecret(tx, request.params.id, change));
        if (!webhook) throw ApiError.notFound("Webhook", request.params.id);
        return ok(webhook, "Secret rotated");
      },
    );

    app.get(
      `${BASE}/:id/deliveries`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Messages sent to the webhook, newest first, each with its attempts",
          params: WebhookId,
          querystring: DeliveryQuery,
          response: { 200: PagedEnvelope(Delivery), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        const webhook = await getNotificationWebhook(ctx.db, tenantId, request.params.id, ctx.clock.now());
        if (!webhook) throw ApiError.notFound("Webhook", request.params.id);
        const { items, total } = await listDeliveries(ctx.db, tenantId, webhook.id, request.query);
        return paged(items, request.query, total);
      },
    );

    app.post(
      `${BASE}/:id/test`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Send a signed message of type `test` to the webhook now; not recorded as a delivery",
          description:
            "Signed and sent as real messages are (Standard Webhooks headers, the current URL and secrets, the same " +
            "timeout and address checks), whatever the webhook's event filter; not queued, retried or listed. A few " +
            "tests per webhook per minute (SIMULATE_PER_WEBHOOK_PER_MINUTE); past that, 429 with Retry-After.",
          params: WebhookId,
          response: { 200: Envelope(NotificationTest), ...errorResponses },
        },
      },
      async (request, reply) => {
        const change = changeOf(request);
        const id = request.params.id;
        const webhook = await getNotificationWebhook(ctx.db, change.tenantId, id, change.at);
        if (!webhook) throw ApiError.notFound("Webhook", id);
        await app.limits.takeTrialSend(reply, `notification-test:${webhook.id}`, "test messages to this webhook");
        const settings = { timeoutMs: ctx.config.webhookTimeoutMs, policy: change.policy, box: change.box };
        const result = await sendTestMessage(ctx.db, change.tenantId, webhook.id, settings, ctx.clock.now());
        await auditTestMessage(ctx.db, { ...change, webhookId: webhook.id, result, at: ctx.clock.now() });
        return ok(result, result.delivered ? "Test message delivered" : "Test message failed");
      },
    );
  };
}
