import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

describe("configuration", () => {
  it("has the documented defaults", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: "0.0.0.0",
      publicBaseUrl: "http://localhost:3000",
      databaseUrl: undefined,
      dataDir: "./data",
      adminApiKey: undefined,
      healthKey: undefined,
      seedDemo: true,
      apiKeyCacheTtlS: 30,
      webhookTimeoutMs: 10000,
      webhookRetryIntervalS: 3600,
      webhookAllowedHosts: [],
      notificationRetryScheduleS: [300, 1500, 3600, 7200, 12600],
      logLevel: "info",
    });
  });

  it("reads TRUST_PROXY as off, on, a hop count or a list of proxies", () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: "true" }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: "10.0.0.0/8, 192.168.1.1" }).trustProxy).toEqual(["10.0.0.0/8", "192.168.1.1"]);
    expect(() => loadConfig({ TRUST_PROXY: "10.0.0.0/99" })).toThrow(/TRUST_PROXY/);
  });

  it("seeds demo data by default only on the embedded database", () => {
    expect(loadConfig({ DATABASE_URL: "postgres://localhost/db" }).seedDemo).toBe(false);
    expect(loadConfig({ DATABASE_URL: "postgres://localhost/db", SEED_DEMO: "true" }).seedDemo).toBe(true);
  });

  it("follows PORT in the default public base URL and trims a trailing slash", () => {
    expect(loadConfig({ PORT: "8080" }).publicBaseUrl).toBe("http://localhost:8080");
    expect(loadConfig({ PUBLIC_BASE_URL: "https://t.example.com/" }).publicBaseUrl).toBe("https://t.example.com");
  });

  it("parses hosts and CIDRs exempt from the private-address block", () => {
    expect(loadConfig({ WEBHOOK_ALLOWED_HOSTS: "127.0.0.1, 10.0.0.0/8,Receiver.Local" }).webhookAllowedHosts).toEqual([
      "127.0.0.1",
      "10.0.0.0/8",
      "receiver.local",
    ]);
  });

  it.each([
    ["PORT", "http"],
    ["PORT", "70000"],
    ["DATABASE_URL", "mysql://x"],
    ["DATABASE_URL", "not a url"],
    ["SEED_DEMO", "maybe"],
    ["API_KEY_CACHE_TTL_S", "-1"],
    ["WEBHOOK_TIMEOUT_MS", "1.5"],
    ["NOTIFICATION_RETRY_SCHEDULE", "5m,soon"],
    ["WEBHOOK_ALLOWED_HOSTS", "10.0.0.0/99"],
    ["LOG_LEVEL", "loud"],
    ["ADMIN_API_KEY", "short"],
    ["JWT_SECRET", "too-short"],
    ["SECRETS_KEY", "k1:too-short"],
    ["SMTP_URL", "http://mail"],
    ["REDIS_URL", "localhost:6379"],
  ])("fails fast naming %s on a bad value (%s)", (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(name);
    expect((error as Error).message).toContain(name);
  });

  it("treats an empty variable as unset", () => {
    expect(loadConfig({ ADMIN_API_KEY: "", HEALTH_KEY: " " })).toMatchObject({
      adminApiKey: undefined,
      healthKey: undefined,
    });
  });
});
