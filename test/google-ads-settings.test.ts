import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, createVia, seedCatalog } from "./helpers/catalog.js";
import {
  adsBody,
  adsPath,
  connectAds,
  type FakeGoogle,
  type GoogleClient,
  getAds,
  putAds,
  startAdsApp,
  startFakeGoogle,
} from "./helpers/fake-google.js";
import { signInPerson } from "./helpers/webhooks.js";

// PUT / GET / DELETE /api/v1/traffic-sources/{id}/google-ads: the record never carries a secret,
// every bad value is a 400 naming its field, and another tenant's source is a 404.

let google: FakeGoogle;
let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let client: GoogleClient;

beforeAll(async () => {
  google = await startFakeGoogle();
  t = await startAdsApp(google);
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  client = google.newClient();
});
afterAll(async () => {
  await t?.close();
  await google?.close();
});

describe("the integration record", () => {
  it("is created (201), shows the client id only, and normalizes the account ids", async () => {
    const res = await putAds(
      t,
      who,
      cat.trafficSourceId,
      adsBody(client, { loginAccountId: "999-888-7777", consent: { adUserData: "CONSENT_GRANTED" } }),
    );
    expect(res.statusCode, res.body).toBe(201);
    const record = res.json().data;
    expect(record).toEqual({
      trafficSourceId: cat.trafficSourceId,
      accountId: "1234567890",
      loginAccountId: "9998887777",
      credentials: { clientId: client.clientId },
      conversionActions: { Signup: "111", FirstTimeDeposit: "222" },
      consent: { adUserData: "CONSENT_GRANTED" },
      enabled: true,
      pendingEvents: 0,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(res.body).not.toContain(client.clientSecret);
    expect(res.body).not.toContain(client.refreshToken);

    const got = await getAds(t, who, cat.trafficSourceId);
    expect(got.data).toEqual(record);
  });

  it("is replaced by a later PUT (200) that may leave the secrets out, keeping them sealed at rest", async () => {
    const res = await putAds(t, who, cat.trafficSourceId, {
      accountId: "1112223333",
      credentials: { clientId: client.clientId },
      conversionActions: { Deposit: "333" },
      enabled: false,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      accountId: "1112223333",
      loginAccountId: null,
      consent: null,
      conversionActions: { Deposit: "333" },
      enabled: false,
    });
    const [row] = await t.ctx.db.query<{ sealed_secrets: string }>(
      "select sealed_secrets from google_ads_integrations where traffic_source_id = $1",
      [cat.trafficSourceId],
    );
    // Sealed by SECRETS_KEY's first key, which the stored value names.
    expect(row?.sealed_secrets).toMatch(/^v2:test:/);
    expect(row?.sealed_secrets).not.toContain(client.clientSecret);
    expect(row?.sealed_secrets).not.toContain(client.refreshToken);
    // The audit log says what changed, never the secrets.
    const audit = await t.ctx.db.query<{ action: string; details: unknown }>(
      "select action, details from audit_log where tenant_id = $1 and action like 'google_ads.%' order by at",
      [who.tenantId],
    );
    expect(audit.map((a) => a.action)).toEqual(["google_ads.create", "google_ads.update"]);
    expect(JSON.stringify(audit)).not.toContain(client.clientSecret);
    expect(JSON.stringify(audit)).not.toContain(client.refreshToken);
  });

  it("is deleted with DELETE; then GET is a 404 naming the traffic source", async () => {
    const sourceId = await createVia(t, who, "traffic-sources", { name: "To delete" });
    await connectAds(t, who, sourceId, adsBody(client));
    const res = await t.call({ method: "DELETE", url: adsPath(sourceId), headers: { authorization: who.apiKey } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ trafficSourceId: sourceId, deleted: true });
    const after = await t.call({ method: "GET", url: adsPath(sourceId), headers: { authorization: who.apiKey } });
    expect(after.statusCode).toBe(404);
    expect(after.json().message).toContain(String(sourceId));
    const again = await t.call({ method: "DELETE", url: adsPath(sourceId), headers: { authorization: who.apiKey } });
    expect(again.statusCode).toBe(404);
  });

  it("goes with its traffic source", async () => {
    const deleter = await seedTenancy(t, { key: { scopes: ["traffic-sources.delete"] } });
    const sourceId = await createVia(t, deleter, "traffic-sources", { name: "Source going away" });
    await connectAds(t, deleter, sourceId, adsBody(client));
    const res = await t.call({
      method: "DELETE",
      url: `/api/v1/traffic-sources/${sourceId}`,
      headers: { authorization: deleter.apiKey },
    });
    expect(res.statusCode, res.body).toBe(200);
    const rows = await t.ctx.db.query("select 1 from google_ads_integrations where traffic_source_id = $1", [sourceId]);
    expect(rows).toEqual([]);
  });
});

describe("bad input", () => {
  const cases: [string, (body: Record<string, unknown>) => Record<string, unknown>, string][] = [
    ["a missing accountId", ({ accountId: _, ...rest }) => rest, "accountId"],
    ["a malformed accountId", (body) => ({ ...body, accountId: "12-ab" }), "accountId"],
    ["a malformed loginAccountId", (body) => ({ ...body, loginAccountId: "42" }), "loginAccountId"],
    ["a missing clientId", (body) => ({ ...body, credentials: { clientSecret: "x", refreshToken: "y" } }), "clientId"],
    [
      "an empty clientSecret",
      (body) => ({ ...body, credentials: { clientId: "c", clientSecret: "", refreshToken: "y" } }),
      "clientSecret",
    ],
    ["no conversion action", (body) => ({ ...body, conversionActions: {} }), "conversionActions"],
    ["an unknown conversion type", (body) => ({ ...body, conversionActions: { Purchase: "1" } }), "Purchase"],
    [
      "the Click type (never recorded as a conversion)",
      (body) => ({ ...body, conversionActions: { Click: "1" } }),
      "Click",
    ],
    ["a conversion action that is not digits", (body) => ({ ...body, conversionActions: { Signup: "abc" } }), "Signup"],
    ["a missing enabled", ({ enabled: _, ...rest }) => rest, "enabled"],
    ["a bad consent value", (body) => ({ ...body, consent: { adUserData: "YES" } }), "adUserData"],
    ["an unknown field", (body) => ({ ...body, developerToken: "x" }), "developerToken"],
  ];

  it.each(cases)("%s is a 400 naming the field", async (_label, change, field) => {
    const sourceId = await createVia(t, who, "traffic-sources", { name: `Bad ${field}` });
    const res = await putAds(t, who, sourceId, change(adsBody(client)));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe("validation_error");
    expect(res.json().message).toContain(field);
  });

  it("a first save without the client secret or refresh token is a 400 naming the one missing", async () => {
    const sourceId = await createVia(t, who, "traffic-sources", { name: "No secrets yet" });
    const noSecret = await putAds(t, who, sourceId, {
      ...adsBody(client),
      credentials: { clientId: client.clientId, refreshToken: client.refreshToken },
    });
    expect(noSecret.statusCode, noSecret.body).toBe(400);
    expect(noSecret.json().message).toContain("credentials.clientSecret");
    const noToken = await putAds(t, who, sourceId, {
      ...adsBody(client),
      credentials: { clientId: client.clientId, clientSecret: client.clientSecret },
    });
    expect(noToken.statusCode, noToken.body).toBe(400);
    expect(noToken.json().message).toContain("credentials.refreshToken");
    expect(noToken.body).not.toContain(client.clientSecret);
  });

  it("a traffic source id that is not a number is a 400 naming it", async () => {
    const res = await putAds(t, who, "abc", adsBody(client));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().message).toContain("id");
  });
});

describe("tenancy and permissions", () => {
  it("another tenant's traffic source is a 404 on every path, and nothing of it changes", async () => {
    const other = await seedTenancy(t);
    const paths = ["", "/uploads", "/uploads/gup_0000000000000000000000000"];
    for (const rest of paths) {
      const res = await t.call({
        method: "GET",
        url: `${adsPath(cat.trafficSourceId)}${rest}`,
        headers: { authorization: other.apiKey },
      });
      expect(res.statusCode, `${rest}: ${res.body}`).toBe(404);
    }
    const put = await putAds(t, other, cat.trafficSourceId, adsBody(client, { accountId: "5555555555" }));
    expect(put.statusCode, put.body).toBe(404);
    const del = await t.call({
      method: "DELETE",
      url: adsPath(cat.trafficSourceId),
      headers: { authorization: other.apiKey },
    });
    expect(del.statusCode, del.body).toBe(404);
    expect((await getAds(t, who, cat.trafficSourceId)).data.accountId).toBe("1112223333");
  });

  it("reading needs webhooks.read, changing needs webhooks.update: the catalog's rights alone do neither", async () => {
    // The people hold catalog rights or webhook rights; the tenant's API key (account.admin) sets things up.
    const editor = await seedTenancy(t, { permissions: ["catalog.read", "catalog.update"] });
    const sourceId = await createVia(t, editor, "traffic-sources", { name: "Editor source" });
    await connectAds(t, editor, sourceId, adsBody(client));
    const hookReader = await signInPerson(t, editor.tenantId, { name: "Hook reader", permissions: ["webhooks.read"] });
    const hookWriter = await signInPerson(t, editor.tenantId, {
      name: "Hook writer",
      permissions: ["webhooks.update"],
    });
    for (const rest of ["", "/uploads"]) {
      const refused = await t.call({
        method: "GET",
        url: `${adsPath(sourceId)}${rest}`,
        headers: { authorization: editor.bearer },
      });
      expect(refused.statusCode, refused.body).toBe(403);
      expect(refused.json().message).toBe("Missing permission 'webhooks.read'");
      const read = await t.call({
        method: "GET",
        url: `${adsPath(sourceId)}${rest}`,
        headers: { authorization: hookReader.bearer },
      });
      expect(read.statusCode, read.body).toBe(200);
    }
    for (const caller of [editor.bearer, hookReader.bearer]) {
      for (const method of ["PUT", "DELETE"] as const) {
        const res = await t.call({
          method,
          url: adsPath(sourceId),
          headers: { authorization: caller },
          ...(method === "PUT" ? { payload: adsBody(client, { accountId: "5555555555" }) } : {}),
        });
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json().message).toBe("Missing permission 'webhooks.update'");
      }
    }
    const put = await t.call({
      method: "PUT",
      url: adsPath(sourceId),
      headers: { authorization: hookWriter.bearer },
      payload: adsBody(client, { accountId: "5555555555" }),
    });
    expect(put.statusCode, put.body).toBe(200);
  });
});

describe("configuration", () => {
  it("defaults to Google's endpoints; GOOGLE_OAUTH_TOKEN_URL and GOOGLE_DATA_MANAGER_URL move them", () => {
    expect(loadConfig({}).google).toEqual({
      oauthTokenUrl: "https://oauth2.googleapis.com/token",
      dataManagerUrl: "https://datamanager.googleapis.com",
    });
    expect(
      loadConfig({ GOOGLE_OAUTH_TOKEN_URL: "http://127.0.0.1:9/token", GOOGLE_DATA_MANAGER_URL: "http://127.0.0.1:9/" })
        .google,
    ).toEqual({ oauthTokenUrl: "http://127.0.0.1:9/token", dataManagerUrl: "http://127.0.0.1:9" });
    expect(() => loadConfig({ GOOGLE_DATA_MANAGER_URL: "datamanager" })).toThrow(ConfigError);
    expect(() => loadConfig({ GOOGLE_OAUTH_TOKEN_URL: "ftp://127.0.0.1/token" })).toThrow(/GOOGLE_OAUTH_TOKEN_URL/);
  });
});
