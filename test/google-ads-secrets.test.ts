import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MINUTE_MS } from "../src/platform/durations.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";
import {
  adsBody,
  adsPath,
  type FakeGoogle,
  type GoogleClient,
  newGclid,
  runUpload,
  startAdsApp,
  startFakeGoogle,
} from "./helpers/fake-google.js";
import { convert } from "./helpers/webhooks.js";

// The OAuth client secret, the refresh token and the access tokens Google hands out are never in
// a log line (captured at trace level) nor in any answer, through saving, failing and succeeding
// uploads, errors included.

const lines: string[] = [];
const answers: string[] = [];
let google: FakeGoogle;
let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let client: GoogleClient;

beforeAll(async () => {
  google = await startFakeGoogle();
  t = await startAdsApp(google, {
    env: { LOG_LEVEL: "trace" },
    app: {
      logger: {
        level: "trace",
        stream: {
          write(line: string) {
            lines.push(line);
          },
        },
      },
    },
  });
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  client = google.newClient();
});
afterAll(async () => {
  await t?.close();
  await google?.close();
});

async function call(options: InjectOptions) {
  const res = await t.call(options);
  answers.push(`${JSON.stringify(res.headers)}\n${res.body}`);
  return res;
}

const secrets = () => [client.clientSecret, client.refreshToken, ...google.issuedTokens];

describe("Google Ads secrets", () => {
  it("are never in a log line or an answer", async () => {
    const path = adsPath(cat.trafficSourceId);
    const headers = { authorization: who.apiKey };
    // A refused save first (its body carries the secrets), then the real one.
    const bad = await call({ method: "PUT", url: path, headers, payload: adsBody(client, { accountId: "x" }) });
    expect(bad.statusCode).toBe(400);
    const saved = await call({ method: "PUT", url: path, headers, payload: adsBody(client) });
    expect(saved.statusCode, saved.body).toBe(201);

    // A failure at the token endpoint, one at the API, then a success.
    const clickId = await clickThrough(t, { ...cat }, `?gclid=${newGclid()}`);
    await convert(t, who, { type: "Signup", clickId });
    google.failToken({ httpStatus: 400, status: "invalid_request", message: "Bad request." });
    await runUpload(t);
    t.clock.advance(30 * MINUTE_MS);
    google.failIngest({ httpStatus: 401, status: "UNAUTHENTICATED", message: "Request had invalid credentials." });
    await runUpload(t);
    t.clock.advance(30 * MINUTE_MS);
    await runUpload(t);
    expect(google.issuedTokens.size).toBe(2);
    expect(google.accepted.size).toBe(1);

    const get = await call({ method: "GET", url: path, headers });
    expect(get.json().data.credentials).toEqual({ clientId: client.clientId });
    const list = await call({ method: "GET", url: `${path}/uploads`, headers });
    expect(list.json().data[0]).toMatchObject({ status: "Sent", attempts: 3 });
    await call({ method: "GET", url: `${path}/uploads/${list.json().data[0].id}`, headers });
    await call({ method: "PUT", url: path, headers, payload: adsBody(client, { enabled: false }) });

    // The log did record the work: the check below is not vacuous.
    expect(lines.some((line) => line.includes("Google Ads upload failed"))).toBe(true);
    expect(lines.some((line) => line.includes("google-ads"))).toBe(true);
    for (const secret of secrets()) {
      expect(secret.length).toBeGreaterThan(16);
      for (const line of lines) expect(line).not.toContain(secret);
      // Every answer after the save, and the save itself, leave them out.
      for (const answer of answers) expect(answer).not.toContain(secret);
    }
    const stored = await t.ctx.db.query<{ row: string }>(
      "select row_to_json(i)::text as row from google_ads_integrations i where traffic_source_id = $1",
      [cat.trafficSourceId],
    );
    for (const secret of secrets()) expect(stored[0]?.row).not.toContain(secret);
  });
});
