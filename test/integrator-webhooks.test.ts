import type { LookupAddress } from "node:dns";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIMULATED_ID_PREFIX } from "../src/features/outgoing-webhooks/event-ops.js";
import { SAMPLE_VALUES } from "../src/features/outgoing-webhooks/placeholders.js";
import { blockedHostProblem } from "../src/features/outgoing-webhooks/url-screen.js";
import { DAY_MS } from "../src/platform/durations.js";
import { AddressPolicy } from "../src/platform/webhook-sender.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { seedCatalog } from "./helpers/catalog.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  attemptsOf,
  createHook,
  getHook,
  listEvents,
  receiverPaths,
  recordConversion,
  simulate,
  startWebhookTestApp,
  suspendHook,
  WEBHOOKS_API,
} from "./helpers/webhooks.js";

/** Outgoing webhooks and the link generator as integrators meet them. */

const path = receiverPaths("/integrator");

let rx: Receiver;
/** No WEBHOOK_ALLOWED_HOSTS: what a default deployment refuses. */
let strict: TestApp;
let who: Tenancy;
/** Loopback, one name and one private range allowed; the receiver on loopback. */
let allowing: TestApp;
let them: Tenancy;

beforeAll(async () => {
  rx = await startReceiver();
  strict = await startTestApp({ app: { rateLimit: { max: 100_000 } } });
  who = await seedTenancy(strict);
  allowing = await startWebhookTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1,localhost,10.0.0.0/8" } });
  them = await seedTenancy(allowing);
});
afterAll(async () => {
  await strict?.close();
  await allowing?.close();
  await rx?.close();
});

function save(t: TestApp, caller: Tenancy, url: string) {
  return t.call({
    method: "POST",
    url: `${WEBHOOKS_API}/settings`,
    headers: { authorization: caller.apiKey },
    payload: { name: "Receiver", url, method: "GET" },
  });
}

function validate(t: TestApp, caller: Tenancy, url: string) {
  return t.call({
    method: "POST",
    url: `${WEBHOOKS_API}/settings/validate`,
    headers: { authorization: caller.apiKey },
    payload: { url },
  });
}

async function hookCount(t: TestApp, caller: Tenancy): Promise<number> {
  const [row] = await t.ctx.db.query<{ n: number }>(
    "select count(*)::int as n from outgoing_webhooks where tenant_id = $1",
    [caller.tenantId],
  );
  return row?.n ?? 0;
}

describe("item 8: a URL whose host would be refused at send is refused at save", () => {
  // Each literal as written, and the host the message names (the URL parser's spelling).
  const LITERALS: [string, string][] = [
    [`http://127.0.0.1:3999/pb?c=\${conversionId}`, "127.0.0.1"],
    ["http://10.0.0.1/pb", "10.0.0.1"],
    ["https://169.254.169.254/latest/meta-data", "169.254.169.254"],
    ["http://192.168.1.20:8080/pb", "192.168.1.20"],
    ["http://0x7f.1/pb", "127.0.0.1"],
    ["http://[::1]:3999/pb", "[::1]"],
    ["http://[fd00::1]/pb", "[fd00::1]"],
    ["http://[::ffff:127.0.0.1]/pb", "[::ffff:7f00:1]"],
  ];

  it.each(LITERALS)("refuses %s with 400 naming the host and WEBHOOK_ALLOWED_HOSTS", async (url, host) => {
    const before = await hookCount(strict, who);
    const res = await save(strict, who, url);
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json();
    expect(body.code).toBe("validation_error");
    expect(body.message).toContain(`host ${host} is a private, loopback or reserved address`);
    expect(body.message).toContain("WEBHOOK_ALLOWED_HOSTS");
    expect(body.data.errors).toEqual([{ path: "url", message: body.message }]);
    expect(await hookCount(strict, who)).toBe(before);
  });

  it("refuses a name that resolves only to loopback (localhost, from the hosts file)", async () => {
    const res = await save(strict, who, "http://localhost:3999/pb");
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().message).toMatch(/host localhost resolves only to private, loopback or reserved addresses/);
    expect(res.json().message).toContain("add localhost to WEBHOOK_ALLOWED_HOSTS");
  });

  it("accepts a name that does not resolve, and refuses a host a placeholder would decide", async () => {
    const plain = await save(strict, who, "https://nowhere.invalid/pb");
    expect(plain.statusCode, plain.body).toBe(201);
    // The origin is fixed at save: no placeholder may stand in the host (docs/outgoing-webhooks.md).
    const steered = await save(strict, who, `https://\${brand}.receiver.invalid/pb?c=\${conversionId}`);
    expect(steered.statusCode, steered.body).toBe(400);
    expect(steered.json().data.errors[0].path).toBe("url");
  });

  it("refuses a PATCH to such a URL and keeps the URL saved", async () => {
    const hook = await createHook(strict, who, { url: "https://receiver.invalid/pb" });
    const res = await strict.call({
      method: "PATCH",
      url: `${WEBHOOKS_API}/settings/${hook.id}`,
      headers: { authorization: who.apiKey },
      payload: { url: "http://127.0.0.1/pb" },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().data.errors[0].path).toBe("url");
    expect((await getHook(strict, who, hook.id)).url).toBe("https://receiver.invalid/pb");
  });

  it("settings/validate answers valid:false with the reason, valid:true for a host it cannot refuse", async () => {
    for (const url of ["http://127.0.0.1:3999/pb", "http://localhost/pb"]) {
      const res = await validate(strict, who, url);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ valid: false, placeholder: null, sampleUrl: null });
      expect(res.json().data.message).toContain("WEBHOOK_ALLOWED_HOSTS");
    }
    const fine = await validate(strict, who, `https://nowhere.invalid/pb?c=\${conversionId}`);
    expect(fine.json().data).toMatchObject({ valid: true });
    // A placeholder problem is still the one reported first.
    const unknown = await validate(strict, who, `http://127.0.0.1/pb?c=\${nope}`);
    expect(unknown.json().data).toMatchObject({ valid: false, placeholder: `\${nope}` });
  });

  it("accepts what WEBHOOK_ALLOWED_HOSTS allows: an address, a name, a range", async () => {
    for (const url of ["http://127.0.0.1:3999/pb", "http://localhost:3999/pb", "http://10.1.2.3/pb"]) {
      const res = await save(allowing, them, url);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(201);
      const checked = await validate(allowing, them, url);
      expect(checked.json().data.valid, url).toBe(true);
    }
    // Outside the allowed range: still refused.
    expect((await save(allowing, them, "http://192.168.0.1/pb")).statusCode).toBe(400);
  });

  it("judges a name by every address it resolves to; a lookup that hangs is cut short and not held against it", async () => {
    const policy = new AddressPolicy([]);
    const answering = (addresses: string[]) => async (): Promise<LookupAddress[]> =>
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
    const url = "https://hooks.example.com/pb";
    const only = await blockedHostProblem(url, { policy, timeoutMs: 1000, resolve: answering(["10.0.0.5", "::1"]) });
    expect(only).toMatch(/hooks\.example\.com resolves only to/);
    // One public address: not refused at save (the send-time check still applies then).
    const mixed = await blockedHostProblem(url, {
      policy,
      timeoutMs: 1000,
      resolve: answering(["10.0.0.5", "93.184.216.34"]),
    });
    expect(mixed).toBeNull();
    const started = performance.now();
    const hanging = await blockedHostProblem(url, {
      policy,
      timeoutMs: 150,
      resolve: () => new Promise<LookupAddress[]>(() => undefined),
    });
    expect(hanging).toBeNull();
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe("item 9: simulate", () => {
  it("answers 409 on a Suspended webhook, as on a Disabled one, and queues nothing", async () => {
    const hook = await createHook(allowing, them, { url: `${rx.base}${path("suspended")}` });
    await suspendHook(allowing, hook.id);
    const res = await simulate(allowing, them, hook.id);
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().code).toBe("conflict");
    expect(res.json().message).toContain("webhook is Suspended; enable it to simulate");
    expect(await listEvents(allowing, them, `?webhookId=${hook.id}`)).toEqual([]);
  });

  it("sends ids a receiver can tell from real ones: conversionId, clickId and externalClickId start with sim_", async () => {
    const p = path("simulated-ids");
    const hook = await createHook(allowing, them, {
      url: `${rx.base}${p}?c=\${conversionId}&k=\${clickId}&x=\${externalClickId}`,
      method: "POST",
    });
    const res = await simulate(allowing, them, hook.id);
    expect(res.statusCode, res.body).toBe(202);
    await allowing.ctx.delivery.tick();
    const [received] = rx.at(p);
    expect(SIMULATED_ID_PREFIX).toBe("sim_");
    expect(received?.query.get("c")).toMatch(/^sim_cnv_/);
    expect(received?.query.get("k")).toBe(`sim_${SAMPLE_VALUES.clickId}`);
    expect(received?.query.get("x")).toBe(`sim_${SAMPLE_VALUES.externalClickId}`);
    const body = JSON.parse(received?.body ?? "null");
    expect(body.conversionId).toBe(received?.query.get("c"));
    expect(body.clickId).toBe(`sim_${SAMPLE_VALUES.clickId}`);
    expect(body.attribution.externalClickId).toBe(`sim_${SAMPLE_VALUES.externalClickId}`);
  });
});

describe("item 10: delivery history is kept 120 days", () => {
  type Row = { id: string; webhook_id: string; status: string; attempts: number };
  function eventRows(caller: Tenancy): Promise<Row[]> {
    return allowing.ctx.db.query<Row>(
      `select e.id, e.webhook_id, e.status,
              (select count(*)::int from webhook_attempts a where a.event_id = e.id) as attempts
         from webhook_events e where e.tenant_id = $1 order by e.created_at, e.id`,
      [caller.tenantId],
    );
  }

  async function cancelAround(caller: Tenancy, at: Date): Promise<number> {
    const res = await allowing.call({
      method: "POST",
      url: `${WEBHOOKS_API}/events/cancel`,
      headers: { authorization: caller.apiKey },
      payload: {
        dateFrom: new Date(at.getTime() - 60_000).toISOString(),
        dateTo: new Date(at.getTime() + 60_000).toISOString(),
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.cancelled;
  }

  it("purges done events older than 120 days with their attempts, never a pending one", async () => {
    const owner = await seedTenancy(allowing, {
      permissions: ["account.admin", "traffic-sources.delete"],
      key: { scopes: ["traffic-sources.delete"] },
    });
    const start = new Date("2026-03-01T12:00:00Z");
    const at = (days: number) => new Date(start.getTime() + days * DAY_MS);
    allowing.clock.set(start);
    const failing = path("retention-failing");
    rx.on(failing, { status: 500 });
    const good = await createHook(allowing, owner, { url: `${rx.base}${path("retention-ok")}` });
    const dropped = await createHook(allowing, owner, { url: `${rx.base}${failing}?h=1` });
    const resent = await createHook(allowing, owner, { url: `${rx.base}${failing}?h=2` });
    const paused = await createHook(allowing, owner, { url: `${rx.base}${path("retention-paused")}` });
    await suspendHook(allowing, paused.id);

    // Day 0: Delivered, two Retrying that fail for good by day 10, and one Paused.
    const first = await recordConversion(allowing, owner);
    await allowing.ctx.delivery.tick();
    allowing.clock.set(new Date(at(10).getTime() - 30 * 60_000));
    await allowing.ctx.delivery.tick();
    const old = new Map((await eventRows(owner)).map((e) => [e.webhook_id, e]));
    expect(old.get(good.id)).toMatchObject({ status: "Delivered", attempts: 1 });
    expect(old.get(dropped.id)).toMatchObject({ status: "Failed", attempts: 2 });
    expect(old.get(paused.id)).toMatchObject({ status: "Paused", attempts: 0 });
    // One Failed is resent and waits: pending again, its attempts with it.
    const waiting = old.get(resent.id)?.id as string;
    allowing.clock.set(at(10));
    expect(
      (
        await allowing.call({
          method: "POST",
          url: `${WEBHOOKS_API}/events/${waiting}/resend`,
          headers: { authorization: owner.apiKey },
        })
      ).statusCode,
    ).toBeLessThan(300);

    // Day 11: four events cancelled before any attempt.
    allowing.clock.set(at(11));
    await recordConversion(allowing, owner);
    expect(await cancelAround(owner, at(11))).toBe(4);
    // Day 100: four more, cancelled too, but recent.
    allowing.clock.set(at(100));
    const recent = await recordConversion(allowing, owner);
    expect(await cancelAround(owner, at(100))).toBe(4);

    const before = await eventRows(owner);
    expect(before).toHaveLength(12);
    const job = allowing.ctx.jobs.find("retention");
    if (!job) throw new Error("no retention job");
    // 119 days after the first events: nothing goes.
    expect(await job.run(at(119))).toMatchObject({ deleted: { webhook_events: 0 } });
    expect(await eventRows(owner)).toEqual(before);

    // 121 days on: day 0's Delivered and Failed go, attempts included; the pending ones stay.
    expect(await job.run(new Date(at(120).getTime() + 60_000))).toMatchObject({ deleted: { webhook_events: 2 } });
    expect((await eventRows(owner)).map((e) => e.id)).toEqual(
      before
        .filter((e) => (e.webhook_id !== good.id && e.webhook_id !== dropped.id) || e.status === "Cancelled")
        .map((e) => e.id),
    );
    // 131 days on: day 11's Cancelled ones go too; day 100's stay.
    expect(await job.run(new Date(at(131).getTime() + 60_000))).toMatchObject({ deleted: { webhook_events: 4 } });
    const after = await eventRows(owner);
    expect(after.filter((e) => e.status !== "Cancelled").sort((a, b) => a.status.localeCompare(b.status))).toEqual([
      expect.objectContaining({ webhook_id: paused.id, status: "Paused" }),
      expect.objectContaining({ id: waiting, status: "Queued", attempts: 2 }),
    ]);
    expect(await attemptsOf(allowing, owner, waiting)).toHaveLength(2);
    expect((await listEvents(allowing, owner, `?conversionId=${first.id}`)).map((e) => e.status).sort()).toEqual([
      "Paused",
      "Queued",
    ]);
    expect(await listEvents(allowing, owner, `?conversionId=${recent.id}`)).toHaveLength(4);
    expect(after).toHaveLength(6);
    const orphans = await allowing.ctx.db.query(
      `select 1 from webhook_attempts a
        where a.tenant_id = $1 and not exists (select 1 from webhook_events e where e.id = a.event_id)`,
      [owner.tenantId],
    );
    expect(orphans).toEqual([]);
    const [attempts] = await allowing.ctx.db.query<{ n: number }>(
      "select count(*)::int as n from webhook_attempts where tenant_id = $1",
      [owner.tenantId],
    );
    expect(attempts?.n).toBe(2);
  });
});

describe("item 11: the link generator answers a new tracker's name as it will be stored", () => {
  it("answers the lower-cased name the first click stores", async () => {
    const cat = await seedCatalog(strict, who);
    for (const typed of ["Winter LAUNCH", "Ärger Straße PROMO"]) {
      const res = await strict.call({
        method: "GET",
        url: `/api/v1/link-generator/router/brand-link/${cat.linkId}/traffic-source/${cat.trafficSourceId}/url?${new URLSearchParams({ tracker: typed })}`,
        headers: { authorization: who.apiKey },
      });
      expect(res.statusCode, res.body).toBe(200);
      const { url, tracker } = res.json().data;
      expect(tracker).toMatchObject({ id: null, isNew: true });
      expect(tracker.name).not.toBe(typed);
      // Following the link stores the tracker: under exactly the name answered.
      const parsed = new URL(url);
      // A browser's user agent: the test client's own is a bot's, and bots create no trackers.
      const go = await strict.call({
        method: "GET",
        url: `${parsed.pathname}${parsed.search}`,
        headers: { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36" },
      });
      expect(go.statusCode, go.body).toBe(302);
      await strict.ctx.tracking.clicks.flush();
      const rows = await strict.ctx.db.query<{ name: string }>(
        "select name from trackers where tenant_id = $1 and lower(name) = lower($2)",
        [who.tenantId, typed],
      );
      expect(rows.map((r) => r.name)).toEqual([tracker.name]);
    }
  });
});
