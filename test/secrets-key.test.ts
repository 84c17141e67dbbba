import { createCipheriv, hkdfSync, randomBytes } from "node:crypto";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { GOOGLE_ADS_SEALED_COLUMNS } from "../src/features/google-ads/index.js";
import { NOTIFICATION_SEALED_COLUMNS } from "../src/features/notifications/index.js";
import { SecretBox } from "../src/features/notifications/signing.js";
import { resealColumn } from "../src/platform/reseal.js";
import { SealedBox, SecretsKeyring } from "../src/platform/sealed-box.js";
import { seedTenancy, TEST_SECRETS_KEY, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, seedCatalog } from "./helpers/catalog.js";
import { postgresUrl } from "./helpers/db.js";
import {
  adsBody,
  adsPath,
  type FakeGoogle,
  type GoogleClient,
  startAdsApp,
  startFakeGoogle,
} from "./helpers/fake-google.js";
import { freePort, start, startScript, waitFor } from "./helpers/process.js";

// Stored secrets are sealed by SECRETS_KEY, apart from the session-signing JWT_SECRET: a keyring
// whose first key seals and every key opens, rotated with `npm run secrets:reseal`; what
// JWT_SECRET sealed before opens until it is re-sealed; a secret whose key is gone is a 409
// asking for it again, and the integration can still be disabled and deleted.

const onPglite = inject("dbKind") === "pglite";
/** The helper apps' JWT_SECRET (test/helpers/app.ts). */
const JWT = "test-jwt-secret-that-is-long-enough-0123456789";
const NEXT_KEY = `next:${Buffer.alloc(32, 2).toString("base64")}`;
const HOOKS = "/api/v1/notifications/webhooks";

/** As the service sealed before SECRETS_KEY: `v1:`, AES-256-GCM under HKDF(JWT_SECRET, label). */
function legacySeal(label: string, plain: string): string {
  const key = Buffer.from(hkdfSync("sha256", JWT, "", label, 32));
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64")}`;
}

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("no ConfigError");
}

describe("the SECRETS_KEY keyring", () => {
  it("refuses a bad keyring naming SECRETS_KEY, never repeating a key", () => {
    const good = Buffer.alloc(32, 9).toString("base64");
    for (const value of [
      good,
      `k1:${Buffer.alloc(16).toString("base64")}`,
      `k1:${good},k1:${good}`,
      `bad id:${good}`,
      `k1:${good},`,
      `k1:${good.slice(0, -1)}!`,
    ]) {
      const error = configError({ SECRETS_KEY: value });
      expect(error.variable).toBe("SECRETS_KEY");
      expect(error.message).toContain("SECRETS_KEY");
      expect(error.message).not.toContain(good.slice(0, 20));
    }
    const config = loadConfig({ SECRETS_KEY: `a:${good}, b:${Buffer.alloc(32, 8).toString("base64")}` });
    expect(config.secretsKey?.ids).toEqual(["a", "b"]);
    // A config written to a log shows key ids, never a key.
    expect(JSON.stringify(config)).not.toContain(good.slice(0, 20));
  });

  it("seals with the first key, opens with any key of the ring, and opens what JWT_SECRET sealed", () => {
    const old = SecretsKeyring.parse(TEST_SECRETS_KEY);
    const both = SecretsKeyring.parse(`${NEXT_KEY},${TEST_SECRETS_KEY}`);
    const next = SecretsKeyring.parse(NEXT_KEY);
    const sealedOld = new SealedBox(old, "x", () => new Error("unreadable")).seal("s3cret");
    expect(sealedOld).toMatch(/^v2:test:/);
    const box = new SealedBox(both, "x", () => new Error("unreadable"));
    expect(box.open(sealedOld)).toBe("s3cret");
    expect(box.seal("s3cret")).toMatch(/^v2:next:/);
    expect(box.isCurrent(sealedOld)).toBe(false);
    // Dropped key, another label, no legacy secret: nothing opens.
    expect(new SealedBox(next, "x", () => new Error("unreadable")).opens(sealedOld)).toBe(false);
    expect(new SealedBox(old, "y", () => new Error("unreadable")).opens(sealedOld)).toBe(false);
    expect(box.opens(legacySeal("x", "s3cret"))).toBe(false);
    expect(
      new SealedBox(both.withLegacy(JWT), "x", () => new Error("unreadable")).open(legacySeal("x", "s3cret")),
    ).toBe("s3cret");
  });
});

describe("rotation and a key that is gone", () => {
  let google: FakeGoogle;
  let t: TestApp;
  let who: Tenancy;
  let cat: CatalogFixture;
  let client: GoogleClient;
  let hook: { id: string; secret: string };

  beforeAll(async () => {
    google = await startFakeGoogle();
    t = await startAdsApp(google, { env: { WEBHOOK_ALLOWED_HOSTS: "receiver.example" } });
    who = await seedTenancy(t);
    cat = await seedCatalog(t, who);
    client = google.newClient();
  });
  afterAll(async () => {
    await t?.close();
    await google?.close();
  });

  const headers = () => ({ authorization: who.apiKey });

  /** `npm run secrets:reseal` on this file's PostgreSQL schema, new key first; its counts. */
  const resealCommand = async () => {
    const [{ s } = { s: "" }] = await t.ctx.db.query<{ s: string }>("select current_schema() as s");
    const url = new URL(postgresUrl());
    url.searchParams.set("options", `-c search_path=${s},public`);
    const reseal = startScript("scripts/secrets-reseal.ts", [], {
      DATABASE_URL: url.toString(),
      JWT_SECRET: JWT,
      SECRETS_KEY: `${NEXT_KEY},${TEST_SECRETS_KEY}`,
    });
    expect(await reseal.exited, reseal.output()).toBe(0);
    const output = reseal.output();
    expect(output).toContain("Sealing with key 'next' of SECRETS_KEY (keys: next, test)");
    expect(output).toContain("Done: every stored secret is sealed with key 'next'");
    return [...output.matchAll(/\w+\.(\w+): (\d+) resealed, \d+ already current, (\d+) unreadable/g)].map((m) => ({
      column: m[1] ?? "",
      resealed: Number(m[2]),
      unreadable: Number(m[3]),
    }));
  };
  const sealedOf = async () => {
    const [ads] = await t.ctx.db.query<{ v: string }>(
      "select sealed_secrets as v from google_ads_integrations where traffic_source_id = $1",
      [cat.trafficSourceId],
    );
    const [hookRow] = await t.ctx.db.query<{ v: string }>(
      "select secret_enc as v from notification_webhooks where id = $1",
      [hook.id],
    );
    return { ads: ads?.v ?? "", hook: hookRow?.v ?? "" };
  };

  it("re-seals every stored secret with the new first key, old-key and JWT_SECRET ones alike, and a second run does nothing", async () => {
    const saved = await t.call({
      method: "PUT",
      url: adsPath(cat.trafficSourceId),
      headers: headers(),
      payload: adsBody(client),
    });
    expect(saved.statusCode, saved.body).toBe(201);
    const created = await t.call({
      method: "POST",
      url: HOOKS,
      headers: headers(),
      payload: { url: "https://receiver.example/h" },
    });
    expect(created.statusCode, created.body).toBe(201);
    hook = created.json().data;
    // This webhook's secret as the previous version sealed it, under JWT_SECRET.
    await t.ctx.db.query("update notification_webhooks set secret_enc = $2 where id = $1", [
      hook.id,
      legacySeal("notification-webhook-secrets", hook.secret),
    ]);
    expect((await sealedOf()).ads).toMatch(/^v2:test:/);

    const ring = SecretsKeyring.parse(`${NEXT_KEY},${TEST_SECRETS_KEY}`).withLegacy(JWT);
    const columns = [...GOOGLE_ADS_SEALED_COLUMNS, ...NOTIFICATION_SEALED_COLUMNS];
    let first: { column: string; resealed: number; unreadable: number }[];
    if (onPglite) {
      // The in-memory test database is this process's alone: the command's own run is below.
      first = [];
      for (const column of columns) first.push(await resealColumn(t.ctx.db, ring, column));
    } else first = await resealCommand();
    expect(first.map((c) => [c.column, c.resealed, c.unreadable])).toEqual([
      ["sealed_secrets", 1, 0],
      ["secret_enc", 1, 0],
      ["previous_secret_enc", 0, 0],
    ]);
    const again = [];
    for (const column of columns) again.push(await resealColumn(t.ctx.db, ring, column));
    expect(again.map((c) => [c.resealed, c.current])).toEqual([
      [0, 1],
      [0, 1],
      [0, 0],
    ]);

    // The old key and JWT_SECRET can now go: the new key alone opens everything.
    const stored = await sealedOf();
    expect(stored.ads).toMatch(/^v2:next:/);
    expect(stored.hook).toMatch(/^v2:next:/);
    const nextOnly = SecretsKeyring.parse(NEXT_KEY);
    expect(new SecretBox(nextOnly).open(stored.hook)).toBe(hook.secret);
    const ads = JSON.parse(new SealedBox(nextOnly, "google-ads-credentials", () => new Error("x")).open(stored.ads));
    expect(ads).toEqual({ clientSecret: client.clientSecret, refreshToken: client.refreshToken });
  });

  // The app still runs with the old key only: to it, the re-sealed secrets are sealed by a key it
  // does not have, as after a key change that went wrong.
  it("answers 409 asking for the Google Ads secrets again, and still reads, disables and deletes", async () => {
    const path = adsPath(cat.trafficSourceId);
    const get = await t.call({ method: "GET", url: path, headers: headers() });
    expect(get.statusCode, get.body).toBe(200);
    expect(get.json().data.credentials).toEqual({ clientId: client.clientId, unreadable: true });

    const withoutSecrets = { ...adsBody(client), credentials: { clientId: client.clientId } };
    const refused = await t.call({ method: "PUT", url: path, headers: headers(), payload: withoutSecrets });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().code).toBe("conflict");
    expect(refused.json().message).toContain("SECRETS_KEY");
    expect(refused.json().data.errors.map((e: { path: string }) => e.path)).toEqual([
      "credentials.clientSecret",
      "credentials.refreshToken",
    ]);
    const oneOnly = {
      ...adsBody(client),
      credentials: { clientId: client.clientId, clientSecret: client.clientSecret },
    };
    expect((await t.call({ method: "PUT", url: path, headers: headers(), payload: oneOnly })).statusCode).toBe(409);

    const disabled = await t.call({
      method: "PUT",
      url: path,
      headers: headers(),
      payload: { ...withoutSecrets, enabled: false },
    });
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(disabled.json().data).toMatchObject({ enabled: false, credentials: { unreadable: true } });

    const entered = await t.call({ method: "PUT", url: path, headers: headers(), payload: adsBody(client) });
    expect(entered.statusCode, entered.body).toBe(200);
    expect(entered.json().data.credentials).toEqual({ clientId: client.clientId });

    // Unreadable again, then deleted.
    await t.ctx.db.query("update google_ads_integrations set sealed_secrets = $2 where traffic_source_id = $1", [
      cat.trafficSourceId,
      (await sealedOf()).ads.replace(/^v2:test:/, "v2:next:"),
    ]);
    const deleted = await t.call({ method: "DELETE", url: path, headers: headers() });
    expect(deleted.statusCode, deleted.body).toBe(200);
  });

  it("reads, updates and deletes an operational webhook whose secret no longer opens, and says to rotate it", async () => {
    const url = `${HOOKS}/${hook.id}`;
    const got = await t.call({ method: "GET", url, headers: headers() });
    expect(got.statusCode, got.body).toBe(200);
    expect(got.json().data.secretUnreadable).toBe(true);
    const listed = await t.call({ method: "GET", url: HOOKS, headers: headers() });
    expect(listed.json().data.find((w: { id: string }) => w.id === hook.id)?.secretUnreadable).toBe(true);
    const patched = await t.call({ method: "PATCH", url, headers: headers(), payload: { description: "still here" } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data).toMatchObject({ description: "still here", secretUnreadable: true });
    const rotated = await t.call({ method: "POST", url: `${url}/rotate-secret`, headers: headers() });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect((await t.call({ method: "GET", url, headers: headers() })).json().data.secretUnreadable).toBeUndefined();
    expect((await t.call({ method: "DELETE", url, headers: headers() })).statusCode).toBe(200);
  });
});

describe("starting without the secrets", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "tp-secrets-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("refuses a PostgreSQL node without JWT_SECRET or SECRETS_KEY, naming them, before connecting", async () => {
    // Nothing listens there: the refusal comes before any connection.
    const base = { DATA_DIR: dataDir, DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" };
    // Side by side: each is a process start.
    const neither = start([], base);
    const noKey = start([], { ...base, JWT_SECRET: JWT });
    const noJwt = start([], { ...base, SECRETS_KEY: TEST_SECRETS_KEY });
    expect(await neither.exited).toBe(1);
    expect(neither.output()).toContain("Invalid configuration: JWT_SECRET and SECRETS_KEY must be set on PostgreSQL");
    expect(await noKey.exited).toBe(1);
    expect(noKey.output()).toContain("Invalid configuration: SECRETS_KEY must be set on PostgreSQL");
    expect(await noJwt.exited).toBe(1);
    expect(noJwt.output()).toContain("Invalid configuration: JWT_SECRET must be set on PostgreSQL");
    expect(noJwt.output()).not.toContain("ECONNREFUSED");
  }, 60_000);

  it.runIf(onPglite)(
    "on the embedded database says where the generated key lives and what a copy gives",
    async () => {
      const dir = join(dataDir, "embedded");
      const port = await freePort();
      const service = start([], { DATA_DIR: dir, PORT: String(port), HOST: "127.0.0.1", SEED_DEMO: "false" });
      try {
        const [, file] = await waitFor(service, /generated into (\S+secrets-key)\./);
        expect(file).toBe(join(dir, "secrets-key"));
        expect(service.output()).toContain("A copy of that file with the database opens every stored");
        expect((await stat(join(dir, "secrets-key"))).mode & 0o777).toBe(0o600);
        await waitFor(service, /running roles/);
      } finally {
        service.child.kill("SIGTERM");
      }
      expect(await service.exited, service.output()).toBe(0);

      // The command re-seals with that key, and says so.
      const reseal = startScript("scripts/secrets-reseal.ts", [], { DATA_DIR: dir });
      expect(await reseal.exited, reseal.output()).toBe(0);
      expect(reseal.output()).toContain(`Sealing with key 'k1' of ${join(dir, "secrets-key")}`);
      expect(reseal.output()).toContain(
        "google_ads_integrations.sealed_secrets: 0 resealed, 0 already current, 0 unreadable",
      );
    },
    120_000,
  );
});
