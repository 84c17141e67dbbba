import { isIP } from "node:net";
import { SecretsKeyring } from "./platform/sealed-box.js";

/** Every setting the service reads from its environment, parsed once at boot. */
export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  adminApiKey: string | undefined;
  healthKey: string | undefined;
  jwtSecret: string | undefined;
  /** SECRETS_KEY: the keys that seal stored secrets; unset on PGlite, one is generated into DATA_DIR. */
  secretsKey: SecretsKeyring | undefined;
  seedDemo: boolean;
  smtpUrl: string | undefined;
  mailFrom: string;
  redisUrl: string | undefined;
  apiKeyCacheTtlS: number;
  webhookTimeoutMs: number;
  webhookRetryIntervalS: number;
  webhookAllowedHosts: string[];
  /** How long saving a webhook URL waits for its host name to resolve (docs/limits.md). */
  webhookSaveDnsTimeoutMs: number;
  notificationRetryScheduleS: number[];
  /** Attempts one delivery loop has under way per tenant and per destination (docs/limits.md "Delivery fairness"). */
  deliveryShare: { perTenant: number; perDestination: number };
  logLevel: LogLevel;
  /** Requests per minute per API key or signed-in person. */
  rateLimitPerMinute: number;
  /** Requests per minute per client IP on routes that need no credential. */
  rateLimitAnonymousPerMinute: number;
  /** How far past our clock a conversion's occurredAt may be, in seconds (program clocks run ahead). */
  conversionMaxFutureS: number;
  /** At most this many blocks written per transaction of the job rollup-blocks. */
  rollupFoldBlocksPerTransaction: number;
  /** The most UTC days a report, composite or MCP window may span (docs/limits.md). */
  reportMaxWindowDays: number;
  /** The statement timeout of a request's database statements, in ms (PostgreSQL; docs/limits.md). */
  statementTimeoutMs: number;
  /** Each tenant's share of report and composite work, and the pool's share reports may hold (docs/limits.md). */
  reportShare: ReportShare;
  /** The deepest nesting of arrays and objects a request body may have (docs/limits.md "Hostile input"). */
  jsonMaxDepth: number;
  /** Limits on the other ways in: tracking, MCP, admin, health, sign-in, key counts (docs/limits.md). */
  wayInLimits: WayInLimits;
  /** Whose X-Forwarded-For to believe for the client IP: nobody, everybody, a hop count, or these addresses. */
  trustProxy: boolean | number | string[];
  /** Port of a separate listener that serves /metrics only; unset: /metrics on the main port, behind a key. */
  metricsPort: number | undefined;
  /** Bearer credential for /metrics; unset: the health key stands in (no key at all: /metrics is off). */
  metricsKey: string | undefined;
  /** Memory and disk bounds of the write buffers (docs/limits.md, "Embedded database, buffers ..."). */
  buffers: BufferLimits;
  build: BuildOverrides;
  /** Google's OAuth token endpoint and Data Manager API base (docs/google-ads.md); tests point them at loopback. */
  google: { oauthTokenUrl: string; dataManagerUrl: string };
  /** The euro reference rates the exchange-rates job fetches (docs/money-and-time.md); tests set them empty or to loopback. */
  fxRates: FxRatesSources;
}

/** Where the exchange-rates job reads the ECB's euro reference rates (docs/money-and-time.md, "Exchange rates"). */
export interface FxRatesSources {
  /** FX_RATES_URL: the daily file; undefined (set to an empty string) turns the job off. */
  url: string | undefined;
  /** FX_RATES_HISTORY_URL: the whole history, read to backfill; undefined: the daily file only. */
  historyUrl: string | undefined;
}

/** docs/limits.md, "Reports and MCP: fair share". */
export interface ReportShare {
  /** Reports, composites and MCP posts running reports one tenant may have running at once per node. */
  concurrencyPerTenant: number;
  /** Of those, how many more may wait for a slot; beyond them a 429 with Retry-After. */
  queuePerTenant: number;
  /** Connections of the database pool reports of all tenants together leave to other requests. */
  poolReserve: number;
}

export interface BufferLimits {
  /** Estimated bytes of unwritten clicks held in memory; beyond it they spill to disk. */
  clickBufferMaxBytes: number;
  /** Bytes of spilled clicks on disk under DATA_DIR; beyond it (or 0) clicks are refused. */
  clickSpillMaxBytes: number;
  /** Estimated bytes of unwritten usage counters; beyond it new counters are dropped. */
  usageBufferMaxBytes: number;
}

/** The limits of docs/limits.md "Rate limits and quotas" beyond the per-key /api/v1 one. */
export interface WayInLimits {
  /** Postbacks per minute per postback key. */
  postbackPerMinute: number;
  /** Page views (POST /collect) per minute per client IP. */
  collectPerMinute: number;
  /** Wrong admin credentials per minute per client IP before the address is refused. */
  adminFailuresPerMinute: number;
  /** Wrong X-Health-Key values per minute per client IP before the address is refused. */
  healthKeyFailuresPerMinute: number;
  /** Failed sign-ins per account (email) within loginFailureWindowMs. */
  loginFailuresPerAccount: number;
  /** Failed sign-ins per client IP within loginFailureWindowMs. */
  loginFailuresPerIp: number;
  loginFailureWindowMs: number;
  /** Simulate calls per minute per outgoing webhook (each sends a real request). */
  simulatePerWebhookPerMinute: number;
  /** Unexpired API keys a tenant may hold. */
  maxApiKeysPerTenant: number;
  /** Page views stored per click. */
  maxPageViewsPerClick: number;
  /** How long /collect waits for a click just made on another node (0: answer at once). */
  collectClickWaitMs: number;
  /** Clicks per minute per client IP that are recorded; beyond them clicks are redirected, not recorded. */
  clickRatePerIpPerMinute: number;
  /** Trackers a tenant's clicks may create per hour; beyond them a click is recorded without its tracker. */
  trackersPerTenantPerHour: number;
  /** Refused credentials per minute per client IP (/api/v1, /mcp, postback keys) before the address gets 429. */
  authFailuresPerIpPerMinute: number;
}

export interface BuildOverrides {
  version: string | undefined;
  buildNumber: string | undefined;
  buildTime: string | undefined;
  commitSha: string | undefined;
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`Invalid configuration: ${variable} ${reason}`);
    this.name = "ConfigError";
  }
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got '${raw}'`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (["true", "1", "yes", "on"].includes(raw)) return true;
  if (["false", "0", "no", "off"].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got '${raw}'`);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, "must be an absolute URL");
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use one of ${protocols.join(", ")}, got '${parsed.protocol}'`);
  }
  return raw;
}

/**
 * A URL with a default that an empty value turns off: unset is `fallback`, set to an empty string
 * (or blanks) is undefined, anything else must be an absolute URL of one of `protocols`.
 */
function urlOrOff(env: Env, name: string, protocols: string[], fallback: string): string | undefined {
  return env[name] === undefined ? fallback : url(env, name, protocols);
}

/** SECRETS_KEY: a keyring; a bad one stops the start, naming the variable and never a key. */
function secretsKeyring(env: Env): SecretsKeyring | undefined {
  const raw = text(env, "SECRETS_KEY");
  if (raw === undefined) return undefined;
  try {
    return SecretsKeyring.parse(raw);
  } catch (error) {
    throw new ConfigError("SECRETS_KEY", (error as Error).message);
  }
}

function secret(env: Env, name: string, minLength: number): string | undefined {
  const raw = text(env, name);
  if (raw !== undefined && raw.length < minLength) {
    throw new ConfigError(name, `must be at least ${minLength} characters`);
  }
  return raw;
}

const DURATION_PART = /(\d+)(h|m|s)/g;

/** Parses `5m,25m,1h,2h,3h30m` into seconds per retry. */
export function parseDurationList(name: string, raw: string): number[] {
  return raw.split(",").map((item) => {
    const part = item.trim();
    if (!/^(\d+h)?(\d+m)?(\d+s)?$/.test(part) || part === "") {
      throw new ConfigError(name, `has a bad duration '${part}' (use forms like 5m, 1h, 3h30m)`);
    }
    let seconds = 0;
    for (const [, amount, unit] of part.matchAll(DURATION_PART)) {
      seconds += Number(amount) * (unit === "h" ? 3600 : unit === "m" ? 60 : 1);
    }
    if (seconds === 0) throw new ConfigError(name, `has a zero duration '${part}' (each wait must be above zero)`);
    return seconds;
  });
}

function hostList(env: Env, name: string): string[] {
  const raw = text(env, name);
  if (raw === undefined) return [];
  return raw.split(",").map((entry) => {
    const value = entry.trim();
    const [address, bits] = value.split("/");
    if (bits !== undefined) {
      const max = isIP(address ?? "") === 6 ? 128 : 32;
      if (isIP(address ?? "") === 0 || !/^\d+$/.test(bits) || Number(bits) > max) {
        throw new ConfigError(name, `has a bad CIDR '${value}'`);
      }
    } else if (!/^[a-zA-Z0-9.:-]+$/.test(value)) {
      throw new ConfigError(name, `has a bad host '${value}'`);
    }
    return value.toLowerCase();
  });
}

function trustProxy(env: Env): boolean | number | string[] {
  const value = text(env, "TRUST_PROXY")?.toLowerCase();
  if (value === undefined || value === "false") return false;
  if (value === "true") return true;
  if (/^\d+$/.test(value)) return Number(value);
  return hostList(env, "TRUST_PROXY");
}

export function loadConfig(env: Env): Config {
  const port = integer(env, "PORT", 3000, 0, 65535);
  const logLevel = (text(env, "LOG_LEVEL") ?? "info").toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError("LOG_LEVEL", `must be one of ${LOG_LEVELS.join(", ")}, got '${logLevel}'`);
  }
  const databaseUrl = url(env, "DATABASE_URL", ["postgres:", "postgresql:"]);
  return {
    port,
    host: text(env, "HOST") ?? "0.0.0.0",
    publicBaseUrl: (url(env, "PUBLIC_BASE_URL", ["http:", "https:"]) ?? `http://localhost:${port}`).replace(/\/+$/, ""),
    databaseUrl,
    dataDir: text(env, "DATA_DIR") ?? "./data",
    adminApiKey: secret(env, "ADMIN_API_KEY", 16),
    healthKey: secret(env, "HEALTH_KEY", 8),
    jwtSecret: secret(env, "JWT_SECRET", 32),
    secretsKey: secretsKeyring(env),
    seedDemo: boolean(env, "SEED_DEMO", databaseUrl === undefined),
    smtpUrl: url(env, "SMTP_URL", ["smtp:", "smtps:"]),
    mailFrom: text(env, "MAIL_FROM") ?? "Tracking Platform <no-reply@localhost>",
    redisUrl: url(env, "REDIS_URL", ["redis:", "rediss:"]),
    apiKeyCacheTtlS: integer(env, "API_KEY_CACHE_TTL_S", 30, 0, 3600),
    webhookTimeoutMs: integer(env, "WEBHOOK_TIMEOUT_MS", 10000, 100, 120000),
    webhookRetryIntervalS: integer(env, "WEBHOOK_RETRY_INTERVAL_S", 3600, 1, 86400),
    webhookAllowedHosts: hostList(env, "WEBHOOK_ALLOWED_HOSTS"),
    webhookSaveDnsTimeoutMs: integer(env, "WEBHOOK_SAVE_DNS_TIMEOUT_MS", 2000, 100, 30_000),
    notificationRetryScheduleS: parseDurationList(
      "NOTIFICATION_RETRY_SCHEDULE",
      text(env, "NOTIFICATION_RETRY_SCHEDULE") ?? "5m,25m,1h,2h,3h30m",
    ),
    // A tenant whose receivers hang holds at most this many of a loop's slots (512 for webhooks
    // and postbacks), so the others' deliveries start at once; one destination gets 64, which
    // at a few ms a request on loopback still carries thousands of deliveries a second.
    deliveryShare: {
      perTenant: integer(env, "DELIVERY_IN_FLIGHT_PER_TENANT", 256, 1, 100_000),
      perDestination: integer(env, "DELIVERY_IN_FLIGHT_PER_DESTINATION", 128, 1, 100_000),
    },
    logLevel: logLevel as LogLevel,
    rateLimitPerMinute: integer(env, "RATE_LIMIT_PER_MINUTE", 1200, 1, 1_000_000),
    rateLimitAnonymousPerMinute: integer(env, "RATE_LIMIT_ANONYMOUS_PER_MINUTE", 120, 1, 1_000_000),
    conversionMaxFutureS: integer(env, "CONVERSION_MAX_FUTURE_S", 300, 0, 86_400),
    rollupFoldBlocksPerTransaction: integer(env, "ROLLUP_FOLD_BLOCKS_PER_TRANSACTION", 128, 64, 1_000_000),
    // At least the 30 days of the default window; at most every day from 0001 to 9999.
    reportMaxWindowDays: integer(env, "REPORT_MAX_WINDOW_DAYS", 400, 30, 3_652_059),
    statementTimeoutMs: integer(env, "STATEMENT_TIMEOUT_MS", 15_000, 100, 3_600_000),
    // One MCP batch of 20 reports held every connection of the pool (10) and made another
    // tenant wait 6.9 s: a tenant runs 2 at once, 4 more wait, and reports leave 3 connections.
    reportShare: {
      concurrencyPerTenant: integer(env, "REPORT_CONCURRENCY_PER_TENANT", 2, 1, 1000),
      queuePerTenant: integer(env, "REPORT_QUEUE_PER_TENANT", 4, 0, 10_000),
      poolReserve: integer(env, "REPORT_POOL_RESERVE", 3, 0, 1000),
    },
    // Real bodies nest a handful of levels; thousands would overflow the validator's stack.
    jsonMaxDepth: integer(env, "JSON_MAX_DEPTH", 64, 4, 1000),
    trustProxy: trustProxy(env),
    wayInLimits: {
      postbackPerMinute: integer(env, "POSTBACK_RATE_LIMIT_PER_MINUTE", 6000, 1, 10_000_000),
      collectPerMinute: integer(env, "COLLECT_RATE_LIMIT_PER_MINUTE", 3000, 1, 10_000_000),
      adminFailuresPerMinute: integer(env, "ADMIN_AUTH_FAILURES_PER_MINUTE", 20, 1, 1_000_000),
      healthKeyFailuresPerMinute: integer(env, "HEALTH_KEY_FAILURES_PER_MINUTE", 20, 1, 1_000_000),
      loginFailuresPerAccount: integer(env, "LOGIN_FAILURES_PER_ACCOUNT", 10, 1, 1_000_000),
      loginFailuresPerIp: integer(env, "LOGIN_FAILURES_PER_IP", 100, 1, 1_000_000),
      loginFailureWindowMs: integer(env, "LOGIN_FAILURE_WINDOW_S", 900, 1, 86_400) * 1000,
      simulatePerWebhookPerMinute: integer(env, "SIMULATE_PER_WEBHOOK_PER_MINUTE", 10, 1, 10_000),
      maxApiKeysPerTenant: integer(env, "MAX_API_KEYS_PER_TENANT", 100, 1, 100_000),
      maxPageViewsPerClick: integer(env, "MAX_PAGE_VIEWS_PER_CLICK", 100, 1, 100_000),
      // The embedded database is one process's: no other node can hold an unwritten click.
      collectClickWaitMs: integer(env, "COLLECT_CLICK_WAIT_MS", databaseUrl === undefined ? 0 : 500, 0, 2000),
      // 600 a minute is one click every 100 s from each of 1,000 people behind one carrier NAT
      // address, far above what people click; one scripted client made 230 a second (docs/limits.md).
      clickRatePerIpPerMinute: integer(env, "CLICK_RATE_PER_IP_PER_MINUTE", 600, 1, 1_000_000_000),
      // A campaign's sub-ids arrive a few new names an hour; one flood made 20,000 in 13 s.
      trackersPerTenantPerHour: integer(env, "TRACKERS_PER_TENANT_PER_HOUR", 1000, 1, 10_000_000),
      // Keys are 256-bit random: the bound is on lookups, not on guessing (docs/limits.md).
      authFailuresPerIpPerMinute: integer(env, "AUTH_FAILURES_PER_IP_PER_MINUTE", 100, 1, 1_000_000),
    },
    metricsPort: text(env, "METRICS_PORT") === undefined ? undefined : integer(env, "METRICS_PORT", 0, 0, 65535),
    metricsKey: secret(env, "METRICS_KEY", 16),
    buffers: {
      clickBufferMaxBytes: integer(env, "CLICK_BUFFER_MAX_BYTES", 64 * 1024 * 1024, 1024 * 1024, 2 ** 40),
      clickSpillMaxBytes: integer(env, "CLICK_SPILL_MAX_BYTES", 1024 * 1024 * 1024, 0, 2 ** 50),
      usageBufferMaxBytes: integer(env, "USAGE_BUFFER_MAX_BYTES", 16 * 1024 * 1024, 64 * 1024, 2 ** 40),
    },
    google: {
      oauthTokenUrl: url(env, "GOOGLE_OAUTH_TOKEN_URL", ["http:", "https:"]) ?? "https://oauth2.googleapis.com/token",
      dataManagerUrl: (
        url(env, "GOOGLE_DATA_MANAGER_URL", ["http:", "https:"]) ?? "https://datamanager.googleapis.com"
      ).replace(/\/+$/, ""),
    },
    fxRates: {
      url: urlOrOff(
        env,
        "FX_RATES_URL",
        ["http:", "https:"],
        "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml",
      ),
      historyUrl: urlOrOff(
        env,
        "FX_RATES_HISTORY_URL",
        ["http:", "https:"],
        "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.xml",
      ),
    },
    build: {
      version: text(env, "APP_VERSION"),
      buildNumber: text(env, "BUILD_NUMBER"),
      buildTime: text(env, "BUILD_TIME"),
      commitSha: text(env, "COMMIT_SHA"),
    },
  };
}
