import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRACKING_RETENTION } from "../src/features/tracking/index.js";
import { DAY_MS } from "../src/platform/durations.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

// A conversion's occurredAt is at most the raw-event retention in the past and at
// most CONVERSION_MAX_FUTURE_S (default 5 minutes) ahead, through the API (one or a batch) and the
// postback alike.

const FORM = "application/x-www-form-urlencoded";
const NOW = new Date("2026-11-20T12:00:00.000Z");
const RETENTION_DAYS = TRACKING_RETENTION.find((r) => r.table === "conversions")?.days ?? Number.NaN;

let t: TestApp;
let who: Tenancy;

beforeAll(async () => {
  t = await startTestApp();
  t.clock.set(NOW.toISOString());
  who = await seedTenancy(t);
});
afterAll(async () => t?.close());

const ago = (ms: number) => new Date(t.clock.now().getTime() - ms).toISOString();
const ahead = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();

function post(payload: Record<string, unknown>, as: Tenancy = who) {
  return t.call({ method: "POST", url: "/api/v1/conversions", headers: { authorization: as.apiKey }, payload });
}

/** The three ways a program posts back: GET query, JSON body, form body. */
async function postbacks(key: string, fields: Record<string, string>) {
  return [
    await t.call({ method: "GET", url: `/postback/${key}?${new URLSearchParams(fields)}` }),
    await t.call({ method: "POST", url: `/postback/${key}`, payload: fields }),
    await t.call({
      method: "POST",
      url: `/postback/${key}`,
      headers: { "content-type": FORM },
      payload: new URLSearchParams(fields).toString(),
    }),
  ];
}

async function countConversions(tenantId: string): Promise<number> {
  const [row] = await t.ctx.db.query<{ n: string }>("select count(*) as n from conversions where tenant_id = $1", [
    tenantId,
  ]);
  return Number(row?.n);
}

describe("occurredAt in the past", () => {
  it("uses the retention of raw conversions (120 days)", () => {
    expect(RETENTION_DAYS).toBe(120);
  });

  it("is refused past the retention with a 400 naming occurredAt and the limit; just within it is recorded", async () => {
    const old = await post({ type: "Signup", occurredAt: ago(RETENTION_DAYS * DAY_MS + 1000) });
    expect(old.statusCode, old.body).toBe(400);
    expect(old.json()).toMatchObject({
      code: "validation_error",
      message: "occurredAt may be at most 120 days in the past",
      data: { errors: [{ path: "occurredAt", message: "may be at most 120 days in the past" }] },
    });
    const epoch = await post({ type: "Signup", occurredAt: "1970-01-01T00:00:00Z" });
    expect(epoch.statusCode, epoch.body).toBe(400);
    expect(epoch.json().data.errors[0].path).toBe("occurredAt");

    const within = await post({ type: "Signup", occurredAt: ago(RETENTION_DAYS * DAY_MS - 60_000) });
    expect(within.statusCode, within.body).toBe(201);
  });

  it("in a batch names the item, and nothing of the batch is recorded", async () => {
    const me = await seedTenancy(t);
    const res = await post(
      {
        items: [
          { type: "Signup", occurredAt: ago(DAY_MS) },
          { type: "Signup" },
          { type: "Signup", occurredAt: ago((RETENTION_DAYS + 3) * DAY_MS) },
        ],
      },
      me,
    );
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().message).toBe("items[2].occurredAt may be at most 120 days in the past");
    expect(res.json().data.errors[0].path).toBe("items[2].occurredAt");
    expect(await countConversions(me.tenantId)).toBe(0);
  });

  it("through the postback is its own 400 JSON naming occurredAt, for GET and POST", async () => {
    const me = await seedTenancy(t);
    for (const res of await postbacks(me.postbackKey, { type: "Signup", occurredAt: ago(200 * DAY_MS) })) {
      expect(res.statusCode, res.body).toBe(400);
      expect(JSON.parse(res.body)).toEqual({
        status: "error",
        message: "occurredAt may be at most 120 days in the past",
      });
    }
    expect(await countConversions(me.tenantId)).toBe(0);
    const [ok] = await postbacks(me.postbackKey, { type: "Signup", occurredAt: ago(100 * DAY_MS) });
    expect(ok?.statusCode, ok?.body).toBe(201);
  });

  it("a conversion the retention deleted cannot be posted again with its externalId: never counted twice", async () => {
    const me = await seedTenancy(t);
    const occurredAt = ago((RETENTION_DAYS - 1) * DAY_MS);
    const fields = { type: "Signup", externalId: "late-signup-1", occurredAt };
    const first = await post(fields, me);
    expect(first.statusCode, first.body).toBe(201);
    const kept = async () => {
      const [row] = await t.ctx.db.query<{ n: string }>(
        "select count(*) as n from conversions where tenant_id = $1 and external_id = $2",
        [me.tenantId, "late-signup-1"],
      );
      return Number(row?.n);
    };
    // Two days later the retention job (the very rule: same cutoff) deletes it.
    const later = new Date(NOW.getTime() + 2 * DAY_MS);
    t.clock.set(later.toISOString());
    try {
      const retention = t.ctx.jobs.find("retention");
      await retention?.run(later);
      expect(await kept()).toBe(0);
      // Posted again with the same externalId: refused, so neither recorded nor sent to webhooks again.
      const again = await post(fields, me);
      expect(again.statusCode, again.body).toBe(400);
      expect(again.json().data.errors[0].path).toBe("occurredAt");
      const [pb] = await postbacks(me.postbackKey, fields);
      expect(pb?.statusCode, pb?.body).toBe(400);
      expect(await countConversions(me.tenantId)).toBe(0);
    } finally {
      t.clock.set(NOW.toISOString());
    }
  });

  it("what is accepted survives the retention job run at that same moment", async () => {
    const me = await seedTenancy(t);
    const res = await post({ type: "Signup", occurredAt: ago(RETENTION_DAYS * DAY_MS - 1) }, me);
    expect(res.statusCode, res.body).toBe(201);
    await t.ctx.jobs.find("retention")?.run(t.clock.now());
    expect(await countConversions(me.tenantId)).toBe(1);
  });
});

describe("occurredAt in the future", () => {
  it("is accepted up to 5 minutes ahead and refused beyond, naming the limit", async () => {
    const near = await post({ type: "Signup", occurredAt: ahead(4 * 60_000) });
    expect(near.statusCode, near.body).toBe(201);
    const far = await post({ items: [{ type: "Signup" }, { type: "Signup", occurredAt: ahead(5 * 60_000 + 1000) }] });
    expect(far.statusCode, far.body).toBe(400);
    expect(far.json().message).toBe("items[1].occurredAt may be at most 5 minutes in the future");
    const me = await seedTenancy(t);
    for (const res of await postbacks(me.postbackKey, { type: "Signup", occurredAt: ahead(3_600_000) })) {
      expect(res.statusCode, res.body).toBe(400);
      expect(JSON.parse(res.body)).toEqual({
        status: "error",
        message: "occurredAt may be at most 5 minutes in the future",
      });
    }
  });
});

describe("CONVERSION_MAX_FUTURE_S", () => {
  let strict: TestApp;
  let them: Tenancy;

  beforeAll(async () => {
    strict = await startTestApp({ env: { CONVERSION_MAX_FUTURE_S: "30" } });
    strict.clock.set(NOW.toISOString());
    them = await seedTenancy(strict);
  });
  afterAll(async () => strict?.close());

  it("sets the skew allowed ahead, for the API and the postback", async () => {
    const at = (ms: number) => new Date(NOW.getTime() + ms).toISOString();
    const call = (occurredAt: string) =>
      strict.call({
        method: "POST",
        url: "/api/v1/conversions",
        headers: { authorization: them.apiKey },
        payload: { type: "Signup", occurredAt },
      });
    expect((await call(at(20_000))).statusCode).toBe(201);
    const refused = await call(at(60_000));
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().message).toBe("occurredAt may be at most 30 seconds in the future");
    const pb = await strict.call({
      method: "GET",
      url: `/postback/${them.postbackKey}?${new URLSearchParams({ type: "Signup", occurredAt: at(60_000) })}`,
    });
    expect(pb.statusCode, pb.body).toBe(400);
    expect(JSON.parse(pb.body).message).toBe("occurredAt may be at most 30 seconds in the future");
  });

  it("is refused at start when not a whole number of seconds within range", async () => {
    const { loadConfig } = await import("../src/config.js");
    expect(() => loadConfig({ CONVERSION_MAX_FUTURE_S: "-1" })).toThrow(/CONVERSION_MAX_FUTURE_S/);
    expect(() => loadConfig({ CONVERSION_MAX_FUTURE_S: "100000" })).toThrow(/CONVERSION_MAX_FUTURE_S/);
    expect(loadConfig({}).conversionMaxFutureS).toBe(300);
  });
});
