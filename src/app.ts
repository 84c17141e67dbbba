import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { Config } from "./config.js";
import type { AppContext } from "./context.js";
// Route plugins come from their own files; a feature's index.ts exports its service API only,
// so no import chain runs from one feature's service through another's routes (a run-time
// import cycle; .dependency-cruiser.cjs refuses one).
import { adminKeyGuard, adminRoutes } from "./features/admin/routes.js";
import { apiReferenceRoutes, openApiDocumentRoute, swaggerUiRoutes } from "./features/api-docs/routes.js";
import { apiTokenExpiryJob } from "./features/api-tokens/index.js";
import { apiTokenRoutes } from "./features/api-tokens/routes.js";
import { auditRoutes } from "./features/audit/routes.js";
import { authHook } from "./features/auth/hook.js";
import {
  ApiKeyVerifier,
  AUTH_RETENTION,
  JwtSigner,
  LastUsedRecorder,
  listenForRevocations,
  SignedInPeople,
} from "./features/auth/index.js";
import { authRoutes } from "./features/auth/routes.js";
import { listenForCatalogChanges } from "./features/catalog/index.js";
import { catalogRoutes } from "./features/catalog/routes.js";
import { clickLogRoutes } from "./features/click-log/index.js";
import { dashboardRoutes } from "./features/dashboard/routes.js";
import { exchangeRatesJob } from "./features/exchange-rates/index.js";
import { exchangeRateRoutes } from "./features/exchange-rates/routes.js";
import {
  GOOGLE_ADS_RETENTION,
  googleAds,
  googleAdsDeliveries,
  googleAdsQueue,
  googleAdsStatusHook,
} from "./features/google-ads/index.js";
import { googleAdsRoutes } from "./features/google-ads/routes.js";
import { activeVersionRoute } from "./features/health/active-version.js";
import { buildReport, CachedReport, defaultChecks, type HealthCheck } from "./features/health/index.js";
import { healthRoutes } from "./features/health/routes.js";
import { serviceStateRoute } from "./features/health/service-route.js";
import { issueRoutes } from "./features/issues/routes.js";
import { mcpConnectionRoutes } from "./features/mcp/connection-routes.js";
import { mcpRoutes } from "./features/mcp/routes.js";
import { NOTIFICATION_RETENTION, notifications, statusChangeNotice } from "./features/notifications/index.js";
import { notificationRoutes } from "./features/notifications/routes.js";
import { webhookEventRoutes } from "./features/outgoing-webhooks/event-routes.js";
import {
  deliveryWorker,
  WEBHOOK_RETENTION,
  webhookClickFanOut,
  webhookDeliveries,
  webhookFanOut,
  webhookStatusFanOut,
} from "./features/outgoing-webhooks/index.js";
import { webhookSettingsRoutes } from "./features/outgoing-webhooks/settings-routes.js";
import { POSTBACK_LOG_RETENTION, postbackLogRoutes } from "./features/postback-log/index.js";
import { ReportGate, reportSlots, rollupBlocksJob } from "./features/reports/index.js";
import { reportRoutes } from "./features/reports/routes.js";
import { savedReportRoutes } from "./features/saved-reports/routes.js";
import {
  postbackDeliveries,
  SOURCE_POSTBACK_RETENTION,
  sourcePostbackHook,
  sourcePostbackStatusHook,
  sourcePostbackWorker,
  trafficSourcePostbacks,
} from "./features/source-postbacks/index.js";
import { sourcePostbackRoutes } from "./features/source-postbacks/routes.js";
import { userRoutes } from "./features/tenants/routes.js";
import { settingsRoutes } from "./features/tenants/settings-routes.js";
import { conversionRoutes } from "./features/tracking/conversion-routes.js";
import type { ClickBufferOptions } from "./features/tracking/index.js";
import { TRACKING_RETENTION, Tracking } from "./features/tracking/index.js";
import { linkGeneratorRoutes } from "./features/tracking/link-generator.js";
import { trackingPublicRoutes } from "./features/tracking/public-routes.js";
import { UsageMeter, usageMetering, usagePurgeJob } from "./features/usage/index.js";
import { usageRoutes } from "./features/usage/routes.js";
import { loadBuildInfo } from "./platform/build-info.js";
import { type Clock, systemClock } from "./platform/clock.js";
import type { Db } from "./platform/db/index.js";
import { frameworkErrors, httpConventions, MAX_PARAM_LENGTH } from "./platform/http/conventions.js";
import { pathIdGuard } from "./platform/http/path-ids.js";
import { limiter, type RateLimitOptions, rateLimits } from "./platform/http/rate-limit.js";
import { sharedSerializers } from "./platform/http/serializers.js";
import { newId, newRequestId } from "./platform/ids.js";
import { JobRegistry } from "./platform/jobs.js";
import { secretSafeLogger } from "./platform/log-redaction.js";
import { MailSender } from "./platform/mail.js";
import { metrics, metricsRegistry } from "./platform/metrics.js";
import { openApiDocument } from "./platform/openapi.js";
import { PLATFORM_RETENTION, retentionJob } from "./platform/retention.js";
import { SecretsKeyring } from "./platform/sealed-box.js";
import { WorkerLoops } from "./worker-loops.js";

export interface AppOptions {
  config: Config;
  db: Db;
  jwtSecret: string;
  /**
   * The keys that seal stored secrets (main.ts: SECRETS_KEY or the generated one). Unset: the
   * config's SECRETS_KEY, else a fresh random key for this app alone (benchmarks, one-off builds).
   */
  secretsKey?: SecretsKeyring;
  clock?: Clock;
  nodeId?: string;
  /** How long one health report is reused; a few seconds in production. */
  healthCacheMs?: number;
  rateLimit?: Partial<RateLimitOptions>;
  /** Meter API-key calls for the usage endpoints (default on; off only to measure its cost). */
  metering?: boolean;
  /** Click buffer tuning (tests and benchmarks). */
  clicks?: ClickBufferOptions;
  /** Pino logger options; false silences it (tests). */
  logger?: FastifyServerOptions["logger"];
}

const BODY_LIMIT_BYTES = 1024 * 1024;
/** While draining, how long a keep-alive connection stays open after its last answer. */
const DRAIN_KEEP_ALIVE_MS = 500;

/** The app, its shared parts, and the worker role's loops (started by main.ts, stopped on close). */
export interface BuiltApp {
  app: FastifyInstance;
  ctx: AppContext;
  workers: WorkerLoops;
}

/** Builds the whole HTTP service without listening, so tests drive the very same app. */
export async function buildApp(options: AppOptions): Promise<BuiltApp> {
  const { config, db } = options;
  const clock = options.clock ?? systemClock;
  const { trustProxy } = config;

  const app = Fastify({
    // Redaction always applies: no log line carries a key, token or password (log-redaction.ts).
    logger: secretSafeLogger(options.logger, config.logLevel),
    bodyLimit: BODY_LIMIT_BYTES,
    requestIdHeader: "x-request-id",
    genReqId: newRequestId,
    // A draining node has closed its listener already: a request that still reaches it on an
    // open keep-alive connection is served (answered with `Connection: close`), not refused
    // with a 503 a balancer would count as a failure (docs/limits.md, "Rolling restarts").
    return503OnClosing: false,
    // Fastify's types take a hop count only as a function.
    trustProxy: typeof trustProxy === "number" ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
    forceCloseConnections: "idle",
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // The router's own refusals (bad percent-encoding, ...) in the envelope too.
    frameworkErrors,
    // One serializer per response schema object, not one per route and status (serializers.ts).
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers() } },
    ajv: {
      // verbose: errors carry the value at fault, so a message can name it. allErrors: every
      // field's error in one answer (a form shows them all at once); every schema is bounded
      // (maxLength, maxItems) and the body by BODY_LIMIT_BYTES, so the extra work is too, and
      // the answer lists at most MAX_FIELD_ERRORS (schema-messages.ts).
      customOptions: {
        removeAdditional: false,
        coerceTypes: "array",
        useDefaults: true,
        allErrors: true,
        verbose: true,
        // OpenAPI's `example` annotation (the value "Try it out" pre-fills), not a rule.
        keywords: ["example"],
      },
    },
  });

  const jobs = new JobRegistry();
  // The jobs' statements run without the statement timeout (STATEMENT_TIMEOUT_MS): a fold or a
  // purge may rightly take longer than a request's statement should (docs/limits.md).
  const unbounded = db.unbounded();
  jobs.register(
    retentionJob(unbounded, [
      ...PLATFORM_RETENTION,
      ...AUTH_RETENTION,
      ...TRACKING_RETENTION,
      ...NOTIFICATION_RETENTION,
      ...WEBHOOK_RETENTION,
      ...SOURCE_POSTBACK_RETENTION,
      ...GOOGLE_ADS_RETENTION,
      ...POSTBACK_LOG_RETENTION,
    ]),
  );
  jobs.register(apiTokenExpiryJob(unbounded));
  jobs.register(usagePurgeJob(unbounded));
  jobs.register(rollupBlocksJob(unbounded, { maxBlocks: config.rollupFoldBlocksPerTransaction }));
  // The euro reference rates (docs/money-and-time.md); FX_RATES_URL set empty turns the job off.
  const fxRatesUrl = config.fxRates.url;
  if (fxRatesUrl !== undefined) jobs.register(exchangeRatesJob(unbounded, { ...config.fxRates, url: fxRatesUrl }));
  const jwt = new JwtSigner(options.jwtSecret);
  // What JWT_SECRET sealed before SECRETS_KEY existed opens until `npm run secrets:reseal`.
  const keyring = (
    options.secretsKey ??
    config.secretsKey ??
    SecretsKeyring.parse(SecretsKeyring.generate())
  ).withLegacy(options.jwtSecret);
  const ctx: AppContext = {
    config,
    db,
    clock,
    nodeId: options.nodeId ?? newId("node"),
    apiKeys: new ApiKeyVerifier(db, clock, config.apiKeyCacheTtlS * 1000),
    // Persons are trusted as long as keys are: the broadcast forgets them at once, the TTL is the fallback.
    people: new SignedInPeople(db, clock, jwt, { ttlMs: config.apiKeyCacheTtlS * 1000 }),
    lastUsed: new LastUsedRecorder(db),
    usage: new UsageMeter(db, app.log, config.buffers.usageBufferMaxBytes),
    mail: new MailSender({ db, clock, log: app.log, smtpUrl: config.smtpUrl, from: config.mailFrom }),
    jwt,
    jobs,
    build: loadBuildInfo(config.build, new Date()),
    tracking: new Tracking(db, clock, app.log, listenForCatalogChanges, {
      maxBytes: config.buffers.clickBufferMaxBytes,
      spillMaxBytes: config.buffers.clickSpillMaxBytes,
      trackersPerTenantPerHour:
        options.rateLimit?.trackersPerTenantPerHour ?? config.wayInLimits.trackersPerTenantPerHour,
      ...options.clicks,
    }),
    delivery: deliveryWorker({ db, clock, log: app.log, config }),
    notifications: notifications({ db, clock, log: app.log, config, keyring }),
    reports: new ReportGate({
      perTenant: config.reportShare.concurrencyPerTenant,
      queuePerTenant: config.reportShare.queuePerTenant,
      totalSlots: reportSlots(db.poolSize, config.reportShare.poolReserve),
    }),
  };
  // Every conversion writes its delivery events in its own transaction.
  ctx.tracking.conversionHooks.push(webhookFanOut);
  ctx.tracking.clickHooks.push(webhookClickFanOut);
  // Traffic-source postbacks are queued in the same transaction (docs/traffic-source-postbacks.md).
  ctx.tracking.conversionHooks.push(sourcePostbackHook);
  // Conversions with a gclid are queued for Google Ads in the same transaction (docs/google-ads.md).
  ctx.tracking.conversionHooks.push(googleAdsQueue);
  // A change of a conversion's status is told, in its transaction, to whoever asked for changes
  // (docs/conversions.md "Statuses"): webhooks and postbacks with statusChanges, the operational
  // webhooks, Google Ads.
  ctx.tracking.statusHooks.push(webhookStatusFanOut, sourcePostbackStatusHook, statusChangeNotice, googleAdsStatusHook);
  // Every place a conversion went, for its page (GET /conversions/{id}/deliveries).
  ctx.tracking.destinations.push(webhookDeliveries, postbackDeliveries, googleAdsDeliveries);
  const ads = googleAds({ db, clock, log: app.log, config, keyring });
  jobs.register(ads.job);
  const workers = new WorkerLoops({ mail: ctx.mail, delivery: ctx.delivery, notifications: ctx.notifications.worker });
  workers.others.push(sourcePostbackWorker({ db, clock, log: app.log, config }));
  workers.others.push(ads.worker);

  // Revocations from any node reach this node's key and person caches; buffered writes land before close.
  const stopListening = await listenForRevocations(db, ctx);
  ctx.lastUsed.start();
  await ctx.tracking.start();
  // Draining: Node closes the keep-alive connections idle when the listener closes, but one busy
  // with a request then stays open after its answer for the keep-alive timeout (72 s): the stop
  // would run out its 15 s grace and exit 1 without the final flush of buffered clicks. A short
  // timeout closes it soon after its last answer (pipelined requests behind it are answered
  // first, which a `Connection: close` on the answer under way would cut off).
  app.addHook("preClose", async () => {
    app.server.keepAliveTimeout = DRAIN_KEEP_ALIVE_MS;
  });
  let closing = false;
  app.addHook("onClose", async () => {
    closing = true;
    // The database may already be gone (a failed node); closing must still finish.
    await stopListening().catch(() => undefined);
    // Buffered clicks are written before the database goes: a graceful stop loses none.
    await ctx.tracking.stop();
    // The worker role's loops stop here only (main.ts starts them): after the requests drained.
    await workers.stop();
    await ctx.usage.close();
    await ctx.lastUsed.stop().catch(() => undefined);
  });
  const checks: HealthCheck[] = defaultChecks({ db, clock, isClosing: () => closing });
  const health = new CachedReport(() => buildReport(checks, clock.now()), options.healthCacheMs ?? 5000);
  const rateLimit: RateLimitOptions = {
    max: config.rateLimitPerMinute,
    anonymousMax: config.rateLimitAnonymousPerMinute,
    windowMs: 60_000,
    ...config.wayInLimits,
    ...options.rateLimit,
  };

  await app.register(httpConventions, { jsonMaxDepth: config.jsonMaxDepth });
  // One set of request counters for every way in (app.limits), Redis-backed when REDIS_URL is set.
  await app.register(limiter(rateLimit, config.redisUrl));
  await app.register(metrics, { port: config.metricsPort, key: config.metricsKey, healthKey: config.healthKey });
  // The write buffers' bounds in bytes and what spilled or was refused beyond them.
  const registry = metricsRegistry(app);
  if (registry) {
    ctx.tracking.clicks.registerMetrics(registry);
    ctx.tracking.registerMetrics(registry);
    ctx.usage.registerMetrics(registry);
    ctx.people.registerMetrics(registry);
  }
  await app.register(activeVersionRoute(ctx.build));

  // The client surface: its own OpenAPI document, explorer and reference page.
  await app.register(async (client) => {
    await client.register(swagger, openApiDocument("client", config.publicBaseUrl));
    await client.register(swaggerUiRoutes({ routePrefix: "/api/swagger", publicBaseUrl: config.publicBaseUrl }));
    // No default fonts: Scalar would fetch them from its CDN, and the docs must work offline.
    // Its hosted-product features (Ask AI, the MCP generator, the developer toolbar with its
    // Configure, Share and Deploy menus) mean nothing for a self-hosted service: all off.
    await client.register(
      apiReferenceRoutes({
        routePrefix: "/api/docs",
        publicBaseUrl: config.publicBaseUrl,
        configuration: {
          url: "/api/swagger/v1/swagger.json",
          withDefaultFonts: false,
          agent: { disabled: true },
          mcp: { disabled: true },
          showDeveloperTools: "never",
        },
      }),
    );
    openApiDocumentRoute(client, "/api/swagger/v1/swagger.json");
    await client.register(
      healthRoutes(ctx, () => health.get()),
      { prefix: "/api" },
    );
    await client.register(
      async (v1) => {
        await v1.register(authHook, { auth: ctx });
        await v1.register(rateLimits);
        await v1.register(pathIdGuard);
        if (options.metering !== false) await v1.register(usageMetering, { meter: ctx.usage, clock });
        await v1.register(authRoutes(ctx));
        await v1.register(apiTokenRoutes(ctx));
        await v1.register(userRoutes(ctx));
        await v1.register(auditRoutes(ctx));
        await v1.register(issueRoutes(ctx));
        await v1.register(usageRoutes(ctx));
        await v1.register(settingsRoutes(ctx));
        await v1.register(exchangeRateRoutes(ctx));
        await v1.register(catalogRoutes(ctx, { traffic_sources: trafficSourcePostbacks(config) }));
        await v1.register(linkGeneratorRoutes(ctx));
        await v1.register(conversionRoutes(ctx, ctx.tracking));
        await v1.register(postbackLogRoutes(ctx));
        await v1.register(clickLogRoutes(ctx));
        await v1.register(reportRoutes(ctx));
        await v1.register(savedReportRoutes(ctx));
        await v1.register(mcpConnectionRoutes());
        await v1.register(serviceStateRoute(ctx.build, () => health.get()));
        await v1.register(webhookSettingsRoutes(ctx));
        await v1.register(webhookEventRoutes(ctx));
        await v1.register(sourcePostbackRoutes(ctx));
        await v1.register(googleAdsRoutes(ctx, ads));
        await v1.register(notificationRoutes(ctx));
      },
      { prefix: "/api/v1" },
    );
    // Outside /api, in their own formats; listed after the API in the document.
    await client.register(trackingPublicRoutes(ctx, ctx.tracking));
    await client.register(mcpRoutes(ctx));
  });

  // The operator surface exists only when it has a credential: otherwise every path is a 404.
  const adminKey = config.adminApiKey;
  if (adminKey !== undefined) {
    await app.register(async (admin) => {
      await admin.register(swagger, openApiDocument("admin", config.publicBaseUrl));
      // The admin document maps the whole operator surface: behind the admin key, as the routes are.
      await admin.register(async (document) => {
        document.addHook("onRequest", adminKeyGuard(adminKey));
        openApiDocumentRoute(document, "/api/swagger/admin/swagger.json");
      });
      await admin.register(adminRoutes(ctx, adminKey), { prefix: "/api/admin" });
    });
  }

  // The dashboard (web/, built by scripts/build-web.ts) at `/`; the paths above keep their answers.
  await app.register(dashboardRoutes());

  return { app, ctx, workers };
}
