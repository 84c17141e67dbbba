import { isIP } from "node:net";

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
  seedDemo: boolean;
  smtpUrl: string | undefined;
  mailFrom: string;
  redisUrl: string | undefined;
  apiKeyCacheTtlS: number;
  webhookTimeoutMs: number;
  webhookRetryIntervalS: number;
  webhookAllowedHosts: string[];
  notificationRetryScheduleS: number[];
  logLevel: LogLevel;
  /** Requests per minute per API key or signed-in person. */
  rateLimitPerMinute: number;
  /** Requests per minute per client IP on routes that need no credential. */
  rateLimitAnonymousPerMinute: number;
  /** Whose X-Forwarded-For to believe for the client IP: nobody, everybody, a hop count, or these addresses. */
  trustProxy: boolean | number | string[];
  build: BuildOverrides;
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
    seedDemo: boolean(env, "SEED_DEMO", databaseUrl === undefined),
    smtpUrl: url(env, "SMTP_URL", ["smtp:", "smtps:"]),
    mailFrom: text(env, "MAIL_FROM") ?? "Tracking Platform <no-reply@localhost>",
    redisUrl: url(env, "REDIS_URL", ["redis:", "rediss:"]),
    apiKeyCacheTtlS: integer(env, "API_KEY_CACHE_TTL_S", 30, 0, 3600),
    webhookTimeoutMs: integer(env, "WEBHOOK_TIMEOUT_MS", 10000, 100, 120000),
    webhookRetryIntervalS: integer(env, "WEBHOOK_RETRY_INTERVAL_S", 3600, 1, 86400),
    webhookAllowedHosts: hostList(env, "WEBHOOK_ALLOWED_HOSTS"),
    notificationRetryScheduleS: parseDurationList(
      "NOTIFICATION_RETRY_SCHEDULE",
      text(env, "NOTIFICATION_RETRY_SCHEDULE") ?? "5m,25m,1h,2h,3h30m",
    ),
    logLevel: logLevel as LogLevel,
    rateLimitPerMinute: integer(env, "RATE_LIMIT_PER_MINUTE", 1200, 1, 1_000_000),
    rateLimitAnonymousPerMinute: integer(env, "RATE_LIMIT_ANONYMOUS_PER_MINUTE", 120, 1, 1_000_000),
    trustProxy: trustProxy(env),
    build: {
      version: text(env, "APP_VERSION"),
      buildNumber: text(env, "BUILD_NUMBER"),
      buildTime: text(env, "BUILD_TIME"),
      commitSha: text(env, "COMMIT_SHA"),
    },
  };
}
