/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { SPEC_LIVE, settingsApi, URL_OK } from "./helpers/webhook-settings.js";
import { SIMULATE_ONLY, WEBHOOKS_API } from "./helpers/webhooks.js";

// The URL a webhook saves: what is refused at save, the validate endpoint and the placeholder list.
describe("outgoing webhook settings: URLs and placeholders", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 100_000 } } });
  });
  afterAll(() => t.close());

  const { tenant, post, get, patch, remove, list, validate, create } = settingsApi(() => t);

  describe("URL validation on save", () => {
    let who: Tenancy;
    beforeAll(async () => {
      who = await tenant();
    });

    const BAD: [string, string, string][] = [
      ["an unknown placeholder", "https://receiver.example/?c=${clickid2}", "${clickid2}"],
      ["a dotted placeholder", "https://receiver.example/?c=${click.id}", "${click.id}"],
      ["a dotted placeholder in braces", "https://receiver.example/?c={{click.id}}", "{{click.id}}"],
      ["an unknown raw placeholder", "https://receiver.example/?c={{{secret}}}", "{{{secret}}}"],
      ["an empty placeholder", "https://receiver.example/?c=${}", "${}"],
    ];

    it.each(BAD)("refuses %s with a message naming it exactly", async (_label, url, placeholder) => {
      const res = await post(who, { name: "Bad", url, method: "GET" });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe("validation_error");
      expect(res.json().message).toContain(placeholder);
      expect(res.json().data.errors).toEqual([{ path: "url", message: expect.stringContaining(placeholder) }]);
    });

    const NOT_WEB: [string, string][] = [
      ["ftp", "ftp://receiver.example/?c=${clickId}"],
      ["javascript", "javascript:alert(1)"],
      ["a relative path", "/postback?c=${clickId}"],
      ["a host-less address", "receiver.example/postback"],
      ["a scheme without //", "https:receiver.example/x"],
      ["a placeholder alone", "${clickId}"],
      ["a host only a simulate-only name fills", "https://${location}/x"],
    ];

    it.each(NOT_WEB)("refuses %s as not an absolute http(s) address", async (_label, url) => {
      const res = await post(who, { name: "Bad", url, method: "GET" });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe("validation_error");
      expect(res.json().message).toMatch(/http or https/);
      expect(res.json().data.errors[0].path).toBe("url");
    });

    // A value the conversion does not have renders empty: a URL that is then no web
    // address would only be found at send time, suspending the webhook as 'Webhook URL Is Invalid'.
    it("refuses a URL that is no web address once a placeholder renders empty, naming the placeholder", async () => {
      const url = "https://{{{parameterA}}}/postback";
      const res = await post(who, { name: "Host from a value", url, method: "GET" });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().code).toBe("validation_error");
      expect(res.json().message).toContain("{{{parameterA}}}");
      expect(res.json().message).toContain("empty");
      expect(res.json().message).toContain("'https:///postback'");
      expect(res.json().data.errors).toEqual([{ path: "url", message: res.json().message }]);

      const hook = await create(who, {}, "Patched to a host from a value");
      const patched = await patch(who, hook.id, { url: "https://{{{parameterA}}}{{{parameterB}}}/postback" });
      expect(patched.statusCode, patched.body).toBe(400);
      expect(patched.json().message).toMatch(/placeholders are empty.*'https:\/\/\/postback'/);
      expect((await get(who, hook.id)).json().data).toEqual(hook);
      expect((await remove(who, hook.id)).statusCode).toBe(200);

      // Still accepted: an empty value that leaves a web address behind.
      const fine = await post(who, {
        name: "Value in the path",
        url: "https://r.example/{{{parameterA}}}/pb",
        method: "GET",
      });
      expect(fine.statusCode, fine.body).toBe(201);
      expect((await remove(who, fine.json().data.id)).statusCode).toBe(200);
    });

    it("stores nothing for a refused URL", async () => {
      expect((await list(who)).json().pagination?.total).toBe(0);
    });

    it("leaves the row unchanged when a PATCH carries a bad url", async () => {
      const hook = await create(who);
      t.clock.advance(1000);
      const res = await patch(who, hook.id, { name: "Changed", url: "https://receiver.example/?c=${clickid2}" });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain("${clickid2}");
      const notWeb = await patch(who, hook.id, { url: "mailto:someone@example.com" });
      expect(notWeb.statusCode).toBe(400);
      expect((await get(who, hook.id)).json().data).toEqual(hook);
    });
  });

  describe("POST settings/validate", () => {
    let who: Tenancy;
    beforeAll(async () => {
      who = await tenant();
    });

    it("answers valid with a sample URL for a good template, simulate-only names included", async () => {
      const res = await validate(who, "https://receiver.example/?c=${clickId}&camp={{campaign}}");
      expect(res.statusCode).toBe(200);
      const data = res.json().data;
      expect(Object.keys(data).sort()).toEqual(["message", "placeholder", "sampleUrl", "valid"]);
      expect(data).toMatchObject({ valid: true, placeholder: null });
      expect(typeof data.message).toBe("string");
      expect(data.sampleUrl).toMatch(/^https:\/\/receiver\.example\/\?c=[^&$]+&camp=[^&]+$/);
      expect(data.sampleUrl).not.toContain("{");
    });

    it("URL-encodes ${name} and {{name}} values and leaves {{{name}}} raw", async () => {
      const data = (await validate(who, "https://r.example/?a=${clientUserAgent}&b={{{clientUserAgent}}}")).json().data;
      expect(data.valid).toBe(true);
      const [, encoded, raw] = /\?a=(.*)&b=(.*)$/.exec(data.sampleUrl) ?? [];
      expect(raw).toBeTruthy();
      expect(encoded).toBe(encodeURIComponent(raw as string));
    });

    it("answers 200 valid false naming the placeholder for an unknown one, like the save refusal", async () => {
      const url = "https://receiver.example/?c=${clickid2}";
      const res = await validate(who, url);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({
        valid: false,
        message: expect.stringContaining("${clickid2}"),
        placeholder: "${clickid2}",
        sampleUrl: null,
      });
      const saved = await post(who, { name: "Bad", url, method: "GET" });
      expect(saved.json().message).toBe(res.json().data.message);
    });

    it("names a dotted placeholder as written", async () => {
      const data = (await validate(who, "https://receiver.example/?c={{ click.id }}")).json().data;
      expect(data).toMatchObject({ valid: false, placeholder: "{{ click.id }}", sampleUrl: null });
      expect(data.message).toContain("{{ click.id }}");
    });

    it("answers valid false for an address that is not http(s) or not absolute", async () => {
      for (const url of ["ftp://receiver.example/", "/relative?c=${clickId}", "not a url"]) {
        const res = await validate(who, url);
        expect(res.statusCode).toBe(200);
        expect(res.json().data).toMatchObject({ valid: false, placeholder: null, sampleUrl: null });
        expect(res.json().data.message).toMatch(/http or https/);
      }
    });

    it("answers valid false naming the placeholder whose empty value leaves no web address", async () => {
      const res = await validate(who, "https://{{{parameterA}}}/postback");
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({
        valid: false,
        message: expect.stringContaining("{{{parameterA}}}"),
        placeholder: "{{{parameterA}}}",
        sampleUrl: null,
      });
    });

    it("saves nothing", async () => {
      await validate(who, URL_OK);
      expect((await list(who)).json().pagination?.total).toBe(0);
    });
  });

  describe("GET placeholders", () => {
    let who: Tenancy;
    let names: { name: string; simulateOnly: boolean }[];
    beforeAll(async () => {
      who = await tenant();
      const res = await t.call({
        method: "GET",
        url: `${WEBHOOKS_API}/placeholders`,
        headers: { authorization: who.apiKey },
      });
      expect(res.statusCode).toBe(200);
      names = res.json().data;
    });

    it("lists every placeholder name, the simulate-only ones flagged", () => {
      const byName = new Map(names.map((p) => [p.name, p.simulateOnly]));
      for (const name of SPEC_LIVE) expect(byName.get(name), name).toBe(false);
      for (const name of SIMULATE_ONLY) expect(byName.get(name), name).toBe(true);
      for (const p of names) expect(Object.keys(p).sort()).toEqual(["name", "simulateOnly"]);
    });

    it("lists each name once (names are case-insensitive)", () => {
      const lower = names.map((p) => p.name.toLowerCase());
      expect(new Set(lower).size).toBe(lower.length);
    });

    it("lists only names a saved URL may use", async () => {
      for (const { name } of names) {
        const data = (await validate(who, `https://receiver.example/?x=\${${name}}`)).json().data;
        expect(data.valid, name).toBe(true);
      }
    });
  });
});
