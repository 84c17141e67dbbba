/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { renderUrl, validateTemplate } from "../src/features/outgoing-webhooks/placeholders.js";
import { type SourcePostbackWorker, sourcePostbackWorker } from "../src/features/source-postbacks/index.js";
import type { TestApp } from "./helpers/app.js";
import type { CatalogFixture } from "./helpers/catalog.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import { clickOn, patchSource, postbackAttempts, postbacksOf, setPostback } from "./helpers/source-postbacks.js";
import {
  attemptsOf,
  cancelWaitingEvents,
  createHook,
  eventOf,
  getHook,
  issuesOf,
  receiverPaths,
  recordConversion,
  seedTenantWithCatalog,
  startWebhookTestApp,
  WEBHOOKS_API,
} from "./helpers/webhooks.js";

// A visitor must never steer a delivery (docs/limits.md). Click parameters (pa, pb, gclid, the
// user agent) are visitor input that raw placeholders insert as they are: a raw placeholder is
// refused at save in the scheme, user info, host or port; in the path and query a raw value
// cannot open a query, a parameter or a fragment of its own; and at send time a delivery whose
// origin differs from its template's, or whose path a value climbs, is not sent at all.

const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36";

let t: TestApp;
let rx: Receiver;
/** Where a steered delivery would go: nothing may ever reach it. */
let thief: Receiver;
let postbacks: SourcePostbackWorker;

beforeAll(async () => {
  t = await startWebhookTestApp({ app: { clicks: { intervalMs: 3_600_000 } } });
  postbacks = sourcePostbackWorker({ db: t.ctx.db, clock: t.ctx.clock, log: t.app.log, config: t.ctx.config });
  rx = await startReceiver();
  thief = await startReceiver();
});
afterAll(async () => {
  await t.close();
  await rx.close();
  await thief.close();
});
afterEach(() => cancelWaitingEvents(t));

const path = receiverPaths("/steer");
const tick = () => t.ctx.delivery.tick();

/** A click through /go with the given query parameters (encoded here); returns its id. */
async function click(cat: CatalogFixture, params: Record<string, string>): Promise<string> {
  const res = await t.call({
    method: "GET",
    url: `/go/${cat.linkId}/${cat.trafficSourceId}?${new URLSearchParams(params)}`,
    headers: { "user-agent": BROWSER },
  });
  expect(res.statusCode, res.body).toBe(302);
  return new URL(String(res.headers.location)).searchParams.get("cid") as string;
}

/** Writes a URL into the webhook's row, as one saved before save-time validation refused it. */
async function saveLegacyUrl(hookId: string, url: string): Promise<void> {
  const rows = await t.ctx.db.query("update outgoing_webhooks set url = $2 where id = $1 returning 1", [hookId, url]);
  expect(rows).toHaveLength(1);
}

function post(who: { apiKey: string }, url: string) {
  return t.call({
    method: "POST",
    url: `${WEBHOOKS_API}/settings`,
    headers: { authorization: who.apiKey },
    payload: { name: "Steered", url, method: "GET" },
  });
}

describe("save: a raw placeholder in the scheme, user info, host or port is refused", () => {
  const REFUSED: [string, string, string][] = [
    ["in the host", "http://localhost{{{parameterA}}}:39101/pb", "{{{parameterA}}}"],
    ["as the whole host after a literal", "https://r.example{{{gclid}}}/pb", "{{{gclid}}}"],
    ["in the user info", "https://{{{parameterB}}}@r.example/pb", "{{{parameterB}}}"],
    ["in the port", "https://r.example:{{{parameterA}}}/pb", "{{{parameterA}}}"],
    ["in the scheme", "http{{{parameterA}}}://r.example/pb", "{{{parameterA}}}"],
    ["in the host, spelled with spaces and capitals", "https://r.example{{{ PARAMETERA }}}/pb", "{{{ PARAMETERA }}}"],
    // Encoded ones too: with pa=m, `v${parameterA}` was the host `vm`.
    ["encoded, inside the host", "http://v${parameterA}:43010/pb", "${parameterA}"],
    ["encoded braces, a host label", "https://{{gclid}}.r.example/pb", "{{gclid}}"],
    ["encoded, the port", "https://r.example:${parameterA}/pb", "${parameterA}"],
    ["encoded, the password", "https://u:${parameterB}@r.example/pb", "${parameterB}"],
  ];

  it.each(REFUSED)("%s: 400 naming the url field and the placeholder", async (_label, url, placeholder) => {
    const { who } = await seedTenantWithCatalog(t);
    const res = await post(who, url);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe("validation_error");
    expect(res.json().message).toContain(placeholder);
    expect(res.json().message).toMatch(/scheme, user info, host or port/);
    expect(res.json().data.errors).toEqual([{ path: "url", message: res.json().message }]);

    // The validate endpoint answers the same refusal.
    const checked = await t.call({
      method: "POST",
      url: `${WEBHOOKS_API}/settings/validate`,
      headers: { authorization: who.apiKey },
      payload: { url },
    });
    expect(checked.statusCode, checked.body).toBe(200);
    expect(checked.json().data).toEqual({ valid: false, message: res.json().message, placeholder, sampleUrl: null });
  });

  it("PATCH refuses it too, and a placeholder of another syntax (%7B...%7D) in the host", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const saved = `${rx.base}${path("patched")}`;
    const hook = await createHook(t, who, { url: saved });
    for (const url of ["http://v${parameterA}:43010/pb", "https://r.example%7BclickId%7D/pb"]) {
      const res = await t.call({
        method: "PATCH",
        url: `${WEBHOOKS_API}/settings/${hook.id}`,
        headers: { authorization: who.apiKey },
        payload: { url },
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().data.errors[0].path).toBe("url");
      expect(res.json().message).toMatch(/scheme, user info, host or port/);
    }
    expect((await getHook(t, who, hook.id)).url).toBe(saved);
  });

  it("a traffic-source postback URL: 400 on postback.url, whatever the syntax", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    for (const [url, placeholder] of [
      ["http://v${externalId}:43010/pb", "${externalId}"],
      ["https://{{payout}}.n.example/pb", "{{payout}}"],
      ["https://{{{externalId}}}.n.example/pb", "{{{externalId}}}"],
      ["https://n.example%7BexternalId%7D/pb", "%7B"],
    ] as const) {
      const res = await patchSource(t, who, cat.trafficSourceId, { clickIdParam: "zid", postback: { url } });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().data.errors[0].path).toBe("postback.url");
      if (placeholder !== "%7B") expect(res.json().message).toContain(placeholder);
      expect(res.json().message).toMatch(/scheme, user info, host or port/);
    }
  });

  it("still accepts raw placeholders in the path, query and fragment", async () => {
    const { who } = await seedTenantWithCatalog(t);
    for (const url of [
      "https://r.example/{{{parameterA}}}/pb",
      "https://r.example/pb?sub={{{parameterB}}}&payout={{eventValue}}",
      "https://r.example/pb#{{{parameterA}}}",
      "https://r.example/${brand}/pb",
      "https://r.example:8443/pb?c={{{clickId}}}",
    ]) {
      const res = await post(who, url);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(201);
    }
  });
});

describe("send: a click value cannot move the delivery to another origin", () => {
  it("a URL saved before the rule: pa '@host:port/x?' is refused as url_origin_changed, nothing sent anywhere", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("legacy-host");
    const hook = await createHook(t, who, { url: `${rx.base}${p}` });
    const legacy = `http://127.0.0.1{{{parameterA}}}:${rx.port}${p}`;
    await saveLegacyUrl(hook.id, legacy);

    const stolen = await recordConversion(t, who, {
      type: "Signup",
      clickId: await click(cat, { pa: `@127.0.0.1:${thief.port}/stolen?` }),
    });
    await tick();
    expect(thief.requests).toEqual([]);
    expect(thief.connections).toBe(0);
    expect(rx.at(p)).toEqual([]);

    const event = await eventOf(t, who, stolen.id);
    // Trying again would render the same values: it fails at once.
    expect(event).toMatchObject({ status: "Failed", attempts: 1, nextAttemptAt: null });
    const [attempt] = await attemptsOf(t, who, event.id);
    expect(attempt).toMatchObject({ errorType: "url_origin_changed", response: null, urlTemplate: legacy });
    expect(attempt?.error).toContain(`127.0.0.1:${thief.port}`);
    expect(attempt?.error).toContain(`127.0.0.1:${rx.port}`);

    // The visitor's refusal neither suspends the webhook nor starts its run of failures.
    expect((await getHook(t, who, hook.id)).status).toBe("Enabled");
    const [row] = await t.ctx.db.query<{ failing_since: Date | null }>(
      "select failing_since from outgoing_webhooks where id = $1",
      [hook.id],
    );
    expect(row?.failing_since).toBeNull();
    const [failure] = await issuesOf(t, who, "outgoing_webhook_failed");
    expect(failure?.details.errorType).toBe("url_origin_changed");
    expect(await issuesOf(t, who, "webhook_url_invalid")).toEqual([]);

    // A click whose value leaves the origin alone still goes out through the same legacy URL.
    const fine = await recordConversion(t, who, { type: "Signup", clickId: await click(cat, { pa: "" }) });
    await tick();
    expect(rx.at(p)).toHaveLength(1);
    expect((await eventOf(t, who, fine.id)).status).toBe("Delivered");
  });

  it("a URL saved before the rule with an encoded value in the host: sent only while the value is empty", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("legacy-encoded");
    const hook = await createHook(t, who, { url: `${rx.base}${p}` });
    // pa=0 would make the host 127.0.0.10: the same encoded whatever the encoding, so only the
    // template's literal origin tells it apart.
    const legacy = `http://127.0.0.1\${parameterA}:${rx.port}${p}`;
    await saveLegacyUrl(hook.id, legacy);

    const steered = await recordConversion(t, who, { type: "Signup", clickId: await click(cat, { pa: "0" }) });
    await tick();
    expect(rx.at(p)).toEqual([]);
    const event = await eventOf(t, who, steered.id);
    expect(event).toMatchObject({ status: "Failed", attempts: 1 });
    const [attempt] = await attemptsOf(t, who, event.id);
    expect(attempt?.errorType).toBe("url_origin_changed");
    expect(attempt?.error).toContain(`127.0.0.10:${rx.port} instead of http://127.0.0.1:${rx.port}`);

    const fine = await recordConversion(t, who, { type: "Signup", clickId: await click(cat, { pa: "" }) });
    await tick();
    expect(rx.at(p)).toHaveLength(1);
    expect((await eventOf(t, who, fine.id)).status).toBe("Delivered");
  });

  it("a traffic-source postback saved before the rule: an encoded value in the host is refused at send", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("legacy-postback");
    await setPostback(t, who, cat.trafficSourceId, "zid", { url: `${rx.base}${p}?sub=\${externalId}` });
    const legacy = `http://127.0.0.1\${externalId}:${rx.port}${p}`;
    const rows = await t.ctx.db.query(
      "update traffic_sources set postback = jsonb_set(postback, '{url}', to_jsonb($2::text)) where id = $1 returning 1",
      [cat.trafficSourceId, legacy],
    );
    expect(rows).toHaveLength(1);

    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=0");
    await recordConversion(t, who, { type: "Signup", clickId });
    expect(await postbacks.tick()).toBe(1);
    expect(rx.at(p)).toEqual([]);
    const [postback] = await postbacksOf(t, who, cat.trafficSourceId);
    expect(postback).toMatchObject({ status: "Failed", attempts: 1 });
    const [attempt] = await postbackAttempts(t, who, cat.trafficSourceId, postback?.id as string);
    expect(attempt).toMatchObject({ errorType: "url_origin_changed", urlTemplate: legacy });
    expect(attempt?.error).toContain(`127.0.0.10:${rx.port}`);
  });

  it("a value that makes the host no web address fails that delivery only, never suspending the webhook", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("encoded-host");
    // Saved before the rule: the encoded value cannot add a delimiter, but '%' makes the host invalid.
    const hook = await createHook(t, who, { url: `${rx.base}${p}` });
    await saveLegacyUrl(hook.id, `http://\${parameterA}.invalid:${rx.port}${p}`);
    const conversion = await recordConversion(t, who, { type: "Signup", clickId: await click(cat, { pa: "%" }) });
    await tick();
    const event = await eventOf(t, who, conversion.id);
    expect(event).toMatchObject({ status: "Failed", attempts: 1 });
    const [attempt] = await attemptsOf(t, who, event.id);
    expect(attempt?.errorType).toBe("url_origin_changed");
    expect((await getHook(t, who, hook.id)).status).toBe("Enabled");
    expect(await issuesOf(t, who, "webhook_url_invalid")).toEqual([]);
  });
});

describe("send: a raw value cannot add a parameter, a query or a fragment", () => {
  it("pb 'x&payout=99999#' stays one value: the payout is the conversion's", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("payout");
    await createHook(t, who, { url: `${rx.base}${p}?sub={{{parameterB}}}&payout={{eventValue}}` });
    const clickId = await click(cat, { pb: "x&payout=99999#" });
    await recordConversion(t, who, { type: "Deposit", clickId, value: 25.5, currency: "EUR" });
    await tick();

    const [got] = rx.at(p);
    expect(rx.at(p)).toHaveLength(1);
    expect(got?.query.getAll("payout")).toEqual(["25.5"]);
    expect(got?.query.get("sub")).toBe("x&payout=99999#");
    expect(got?.url).toBe(`${p}?sub=x%26payout=99999%23&payout=25.5`);
  });

  it("a raw path value keeps its slashes and escapes but cannot open a query or fragment", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("raw-path");
    await createHook(t, who, { url: `${rx.base}${p}/{{{parameterA}}}/end?c=\${clickId}` });
    const clickId = await click(cat, { pa: "a/b%2Fc?admin=1#x" });
    await recordConversion(t, who, { type: "Signup", clickId });
    await tick();
    const [got] = rx.requests.filter((r) => r.path.startsWith(p));
    expect(got?.url).toBe(`${p}/a/b%2Fc%3Fadmin=1%23x/end?c=${clickId}`);
    expect([...(got?.query.keys() ?? [])]).toEqual(["c"]);
  });
});

describe("send: a value cannot climb the path", () => {
  it.each([
    ["an encoded '..'", "/${parameterA}/pb", { pa: ".." }],
    ["an encoded '.'", "/${parameterA}/pb", { pa: "." }],
    ["two encoded '.' side by side", "/${parameterA}${parameterB}/pb", { pa: ".", pb: "." }],
    ["a raw '%2E%2E'", "/{{{parameterA}}}/pb", { pa: "%2E%2E" }],
    ["a raw '../..' with slashes", "/x/{{{parameterA}}}/pb", { pa: "../../elsewhere" }],
    ["a raw backslash '..\\'", "/x/{{{parameterA}}}/pb", { pa: "..\\y" }],
  ])("%s: url_path_changed, nothing sent", async (_label, tail, params) => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("climb");
    await createHook(t, who, { url: `${rx.base}${p}${tail}` });
    const before = rx.requests.length;
    const conversion = await recordConversion(t, who, { type: "Signup", clickId: await click(cat, params) });
    await tick();
    expect(rx.requests).toHaveLength(before);
    const event = await eventOf(t, who, conversion.id);
    expect(event).toMatchObject({ status: "Failed", attempts: 1 });
    const [attempt] = await attemptsOf(t, who, event.id);
    expect(attempt).toMatchObject({ errorType: "url_path_changed", response: null });
  });

  it("a dot that is part of a longer segment, or in the query, goes out as it is", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("dots-ok");
    await createHook(t, who, { url: `${rx.base}${p}/\${parameterA}/pb?b=\${parameterB}` });
    await recordConversion(t, who, { type: "Signup", clickId: await click(cat, { pa: "...", pb: ".." }) });
    await tick();
    const [got] = rx.at(`${p}/.../pb`);
    expect(got?.query.get("b")).toBe("..");
  });
});

describe("renderUrl", () => {
  it("renders the sample of a saveable template exactly as render does", () => {
    const template = "https://r.example/${brand}/pb/{{{parameterA}}}?e={{eventName}}&r={{{parameterB}}}#{{{gclid}}}";
    const values = { brand: "b", parameterA: "p/a", eventName: "A B", parameterB: "q", gclid: "g#h" };
    expect(validateTemplate(template)).toContain("https://r.example/Brand/pb/");
    expect(renderUrl(template, values)).toEqual({
      url: "https://r.example/b/pb/p/a?e=A%20B&r=q#g#h",
      steered: null,
    });
  });

  it("an encoded value in the origin of a URL saved before the rule is refused (pa=m made host v into vm)", () => {
    expect(renderUrl("http://v${parameterA}:43010/", { parameterA: "m" }).steered).toEqual({
      errorType: "url_origin_changed",
      message: "A value would send the delivery to http://vm:43010 instead of http://v:43010; nothing was sent",
    });
    expect(renderUrl("http://v${parameterA}:43010/", { parameterA: null }).steered).toBeNull();
    expect(renderUrl("https://r.example:443${parameterA}/", { parameterA: "1" }).steered?.errorType).toBe(
      "url_origin_changed",
    );
    expect(renderUrl("https://u:{{parameterB}}@r.example/", { parameterB: "x" }).steered?.errorType).toBe(
      "url_origin_changed",
    );
  });

  it("escapes control characters in raw values, so the parser cannot drop them to make '..'", () => {
    const { url, steered } = renderUrl("https://r.example/x/{{{parameterA}}}/pb", { parameterA: ".\n." });
    expect(url).toBe("https://r.example/x/.%0A./pb");
    expect(steered).toBeNull();
    expect(new URL(url).pathname).toBe("/x/.%0A./pb");
  });

  it("a dot segment written in the template itself is the template's own", () => {
    expect(renderUrl("https://r.example/a/../pb/${clickId}", { clickId: "c" }).steered).toBeNull();
  });
});
