// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the placeholder syntax itself is the subject under test
import { describe, expect, it } from "vitest";
import {
  LIVE_PLACEHOLDERS,
  PlaceholderError,
  type PlaceholderName,
  type PlaceholderValues,
  render,
  SAMPLE_VALUES,
  SIMULATE_ONLY_PLACEHOLDERS,
  tokens,
  validateTemplate,
} from "../src/features/outgoing-webhooks/placeholders.js";

// Unit tests of the URL placeholder engine (docs/outgoing-webhooks.md): every name renders as
// documented, and a refusal is a typed PlaceholderError whose message names the placeholder at fault.

const ALL_NAMES: readonly PlaceholderName[] = [...LIVE_PLACEHOLDERS, ...SIMULATE_ONLY_PLACEHOLDERS];

/** The PlaceholderError validateTemplate throws; fails the test if it accepts or throws something else. */
function refusal(template: string): PlaceholderError {
  try {
    validateTemplate(template);
  } catch (error) {
    if (error instanceof PlaceholderError) return error;
    throw error;
  }
  throw new Error(`validateTemplate accepted ${JSON.stringify(template)}`);
}

describe("the name lists", () => {
  it("hold every documented name, live and simulate-only apart", () => {
    const specLive = [
      "clickId",
      "externalClickId",
      "eventName",
      "eventValue",
      "currencyCode",
      "eventTime",
      "eventTimeStamp",
      "conversionId",
      "conversionType",
      "parameterA",
      "parameterB",
      "gclid",
      "fbclid",
      "msclkid",
      "obclid",
      "trafficSource",
      "account",
      "brand",
      "program",
      "clientUserAgent",
    ];
    expect(LIVE_PLACEHOLDERS).toEqual(expect.arrayContaining(specLive));
    expect([...SIMULATE_ONLY_PLACEHOLDERS].sort()).toEqual(
      ["medium", "campaign", "term", "content", "creative", "location", "locationPath", "documentTitle"].sort(),
    );
  });

  it.each(["trafficSource", "account", "brand", "program"])("%s has an id form", (name) => {
    expect(LIVE_PLACEHOLDERS).toContain(`${name}Id`);
  });

  it("have no duplicates, not even ignoring case, and no overlap between live and simulate-only", () => {
    const lower = ALL_NAMES.map((n) => n.toLowerCase());
    expect(new Set(lower).size).toBe(ALL_NAMES.length);
  });

  it("are all plain names", () => {
    for (const name of ALL_NAMES) expect(name).toMatch(/^[A-Za-z][A-Za-z0-9_]*$/);
  });

  it("SAMPLE_VALUES fills exactly every name with a non-empty string", () => {
    expect(Object.keys(SAMPLE_VALUES).sort()).toEqual([...ALL_NAMES].sort());
    for (const name of ALL_NAMES) {
      const value = SAMPLE_VALUES[name];
      expect(typeof value, name).toBe("string");
      expect(value, name).not.toBe("");
    }
  });
});

describe("tokens", () => {
  it("returns nothing for a template without placeholders", () => {
    expect(tokens("")).toEqual([]);
    expect(tokens("https://x.example/path?a=1&b=2#frag")).toEqual([]);
  });

  it.each([
    ["${clickId}", "clickId", false],
    ["{{clickId}}", "clickId", false],
    ["{{{clickId}}}", "clickId", true],
  ])("%s: text, inner, raw, name, problem", (text, inner, raw) => {
    expect(tokens(`https://x.example/?c=${text}`)).toEqual([{ text, inner, raw, name: "clickId", problem: null }]);
  });

  it.each([
    ["${CLICKID}", "CLICKID"],
    ["{{ClickId}}", "ClickId"],
    ["{{{clickid}}}", "clickid"],
    ["${brandid}", "brandid"],
    ["${CLIENTUSERAGENT}", "CLIENTUSERAGENT"],
  ])("%s: inner keeps the spelling as written, name is the canonical spelling", (text, inner) => {
    const [token] = tokens(text);
    expect(token?.inner).toBe(inner);
    expect(token?.name).toBe(ALL_NAMES.find((n) => n.toLowerCase() === inner.toLowerCase()));
    expect(token?.problem).toBeNull();
  });

  it.each([
    ["${ clickId }", false],
    ["{{  clickId  }}", false],
    ["{{{ clickId }}}", true],
    ["${\tclickId\n}", false],
  ])("%s: text is as written, inner is trimmed", (text, raw) => {
    expect(tokens(text)).toEqual([{ text, inner: "clickId", raw, name: "clickId", problem: null }]);
  });

  it.each([
    ["${click.id}", "click.id"],
    ["{{click.id}}", "click.id"],
    ["{{{conversion.clickId}}}", "conversion.clickId"],
    ["${}", ""],
    ["{{}}", ""],
    ["{{{}}}", ""],
    ["${  }", ""],
    ["${click id}", "click id"],
    ["${click-id}", "click-id"],
    ["${1clickId}", "1clickId"],
    ["${_clickId}", "_clickId"],
    ["${$clickId}", "$clickId"],
    ["${clickId[0]}", "clickId[0]"],
    ["${clickId()}", "clickId()"],
    ["${clickId|upper}", "clickId|upper"],
    ['{{"a":1}}', '"a":1'],
    ["${clïckId}", "clïckId"],
  ])("%s is not_plain", (text, inner) => {
    expect(tokens(text)).toEqual([{ text, inner, raw: text.startsWith("{{{"), name: null, problem: "not_plain" }]);
  });

  it.each([
    ["${clickid2}", "clickid2"],
    ["{{click_id}}", "click_id"],
    ["{{{foo}}}", "foo"],
    ["${ClickIdentifier}", "ClickIdentifier"],
    ["${constructor}", "constructor"],
    ["${toString}", "toString"],
    ["${hasOwnProperty}", "hasOwnProperty"],
  ])("%s is unknown", (text, inner) => {
    expect(tokens(text)).toEqual([{ text, inner, raw: text.startsWith("{{{"), name: null, problem: "unknown" }]);
  });

  it("lists several placeholders in order, repeats included", () => {
    const found = tokens("https://x.example/${clickId}?e={{eventName}}&r={{{gclid}}}&again=${CLICKID}&bad=${x.y}");
    expect(found.map((t) => [t.text, t.name, t.raw, t.problem])).toEqual([
      ["${clickId}", "clickId", false, null],
      ["{{eventName}}", "eventName", false, null],
      ["{{{gclid}}}", "gclid", true, null],
      ["${CLICKID}", "clickId", false, null],
      ["${x.y}", null, false, "not_plain"],
    ]);
  });

  it("reads the longest brace form first", () => {
    expect(tokens("{{{clickId}}}").map((t) => t.text)).toEqual(["{{{clickId}}}"]);
    // Unbalanced triple braces fall back to the double form, the stray brace stays text.
    expect(tokens("{{{clickId}}").map((t) => t.text)).toEqual(["{{clickId}}"]);
    expect(tokens("{{clickId}}}").map((t) => t.text)).toEqual(["{{clickId}}"]);
    expect(tokens("{{{{clickId}}}}").map((t) => t.text)).toEqual(["{{{clickId}}}"]);
  });

  it.each([
    "https://x.example/{",
    "https://x.example/}",
    "https://x.example/?a=${",
    "https://x.example/?a=$clickId",
    "https://x.example/?a={clickId}",
    "https://x.example/?a=$ {clickId}",
    'https://x.example/?q={"a":{"b":1}}',
    "https://x.example/?a={{clickId}",
    "https://x.example/?a={{ {clickId} }}",
    "https://x.example/?a=${{clickId}",
  ])("finds no placeholder in %s", (template) => {
    expect(tokens(template)).toEqual([]);
  });

  it("finds the inner placeholder of nested-looking text", () => {
    expect(tokens("${${clickId}}").map((t) => t.text)).toEqual(["${clickId}"]);
    expect(tokens("${{{clickId}}}").map((t) => t.text)).toEqual(["{{{clickId}}}"]);
    expect(tokens("$${clickId}").map((t) => t.text)).toEqual(["${clickId}"]);
  });

  it("is stateless across calls (the global regex does not carry lastIndex)", () => {
    for (let i = 0; i < 3; i++) expect(tokens("a${clickId}b").length).toBe(1);
  });
});

describe("render", () => {
  const encodings: [string, string][] = [
    ["plain", "plain"],
    ["with space", "with%20space"],
    ["a&b=c", "a%26b%3Dc"],
    ["a/b?c#d", "a%2Fb%3Fc%23d"],
    ["100%", "100%25"],
    ["a+b", "a%2Bb"],
    ["café", "caf%C3%A9"],
    ["日本", "%E6%97%A5%E6%9C%AC"],
    ["🎉", "%F0%9F%8E%89"],
    ["https://brand.example/welcome?x=1", "https%3A%2F%2Fbrand.example%2Fwelcome%3Fx%3D1"],
    ["${clickId}", "%24%7BclickId%7D"],
    ["-_.!~*'()", "-_.!~*'()"],
    ["", ""],
  ];

  it.each(encodings)("${name} and {{name}} URL-encode %j as %s", (value, encoded) => {
    const values: PlaceholderValues = { eventName: value };
    expect(render("${eventName}", values)).toBe(encoded);
    expect(render("{{eventName}}", values)).toBe(encoded);
    expect(render("https://x.example/?e=${eventName}&f={{eventName}}", values)).toBe(
      `https://x.example/?e=${encoded}&f=${encoded}`,
    );
  });

  it.each(encodings)("{{{name}}} inserts %j raw", (value) => {
    expect(render("{{{eventName}}}", { eventName: value })).toBe(value);
    expect(render("https://x.example/?e={{{eventName}}}", { eventName: value })).toBe(`https://x.example/?e=${value}`);
  });

  it("the encoded value round-trips through decodeURIComponent", () => {
    const value = "a b&c=d/e?f#g%h+i 🎉 é";
    expect(decodeURIComponent(render("${eventName}", { eventName: value }))).toBe(value);
  });

  it("does not read replacement patterns in values ($&, $1, $$)", () => {
    const values: PlaceholderValues = { eventName: "$&-$1-$$-$`" };
    expect(render("{{{eventName}}}", values)).toBe("$&-$1-$$-$`");
    expect(render("${eventName}", values)).toBe(encodeURIComponent("$&-$1-$$-$`"));
  });

  it("does not re-expand placeholders found in values", () => {
    expect(render("{{{eventName}}}", { eventName: "${clickId}", clickId: "X" })).toBe("${clickId}");
  });

  it.each(["${CLICKID}", "${clickid}", "{{ClickId}}", "{{{CLICKid}}}", "${ClIcKiD}"])(
    "%s is case-insensitive",
    (template) => {
      expect(render(template, { clickId: "abc" })).toBe("abc");
    },
  );

  it.each(["${ clickId }", "{{  clickId }}", "{{{ clickId\t}}}", "${\n clickId \n}"])(
    "%j allows whitespace inside the braces",
    (template) => {
      expect(render(template, { clickId: "a b" })).toBe(template.startsWith("{{{") ? "a b" : "a%20b");
    },
  );

  it("renders several and repeated placeholders, mixing forms", () => {
    const values: PlaceholderValues = {
      clickId: "c 1",
      eventName: "Dep&osit",
      eventValue: "9.99",
      currencyCode: "EUR",
    };
    expect(
      render(
        "https://x.example/pb/${clickId}?e={{eventName}}&v={{{eventValue}}}&c=${currencyCode}&again=${CLICKID}&raw={{{clickId}}}",
        values,
      ),
    ).toBe("https://x.example/pb/c%201?e=Dep%26osit&v=9.99&c=EUR&again=c%201&raw=c 1");
  });

  it("renders adjacent placeholders and surrounding text", () => {
    const values: PlaceholderValues = { parameterA: "a", parameterB: "b" };
    expect(render("${parameterA}${parameterB}", values)).toBe("ab");
    expect(render("x{{parameterA}}y{{{parameterB}}}z", values)).toBe("xaybz");
  });

  it.each([
    ["missing", {}],
    ["null", { clickId: null }],
  ] as [string, PlaceholderValues][])("a %s value renders empty in every form", (_label, values) => {
    expect(render("https://x.example/?c=${clickId}&d={{clickId}}&e={{{clickId}}}", values)).toBe(
      "https://x.example/?c=&d=&e=",
    );
  });

  it("an empty-string value renders empty", () => {
    expect(render("a${clickId}b", { clickId: "" })).toBe("ab");
  });

  it("unknown and non-plain placeholders render empty", () => {
    const values = SAMPLE_VALUES;
    expect(render("a${clickid2}b{{click.id}}c{{{}}}d${}e", values)).toBe("abcde");
  });

  it("does not resolve prototype names", () => {
    expect(render("a${constructor}b${toString}c${__proto__}d", {})).toBe("abcd");
  });

  it.each([
    ["https://x.example/{", "https://x.example/{"],
    ["https://x.example/}", "https://x.example/}"],
    ["https://x.example/?a=${", "https://x.example/?a=${"],
    ["https://x.example/?a=$clickId", "https://x.example/?a=$clickId"],
    ["https://x.example/?a={clickId}", "https://x.example/?a={clickId}"],
    ['https://x.example/?q={"a":{"b":1}}', 'https://x.example/?q={"a":{"b":1}}'],
    ["https://x.example/?a={{clickId}", "https://x.example/?a={{clickId}"],
    ["{{{clickId}}", "{ID"],
    ["{{clickId}}}", "ID}"],
    ["${${clickId}}", "${ID}"],
    ["$${clickId}", "$ID"],
    ["{{{{clickId}}}}", "{ID}"],
  ])("%s: stray braces stay as text -> %s", (template, expected) => {
    expect(render(template, { clickId: "ID" })).toBe(expected);
  });

  it("leaves a template without placeholders unchanged", () => {
    const template = "https://x.example/a/b?c=d&e=f#g";
    expect(render(template, SAMPLE_VALUES)).toBe(template);
  });

  it.each(LIVE_PLACEHOLDERS.map((name) => [name]))("live %s renders its value", (name) => {
    const values: PlaceholderValues = { [name]: `v ${name}/&` };
    const encoded = encodeURIComponent(`v ${name}/&`);
    expect(render(`\${${name}}`, values)).toBe(encoded);
    expect(render(`{{${name}}}`, values)).toBe(encoded);
    expect(render(`{{{${name}}}}`, values)).toBe(`v ${name}/&`);
    expect(render(`\${${name.toUpperCase()}}`, values)).toBe(encoded);
    expect(render(`\${${name.toLowerCase()}}`, values)).toBe(encoded);
  });

  it.each(SIMULATE_ONLY_PLACEHOLDERS.map((name) => [name]))(
    "simulate-only %s renders empty in a live postback and filled in Simulate",
    (name) => {
      // A live postback carries only the live values.
      const live: PlaceholderValues = {};
      for (const n of LIVE_PLACEHOLDERS) live[n] = SAMPLE_VALUES[n];
      expect(render(`a\${${name}}b{{${name}}}c{{{${name}}}}d`, live)).toBe("abcd");

      const sample = SAMPLE_VALUES[name] ?? "";
      expect(render(`a\${${name}}b{{{${name}}}}c`, SAMPLE_VALUES)).toBe(`a${encodeURIComponent(sample)}b${sample}c`);
    },
  );

  it("renders every name in one template with the sample values", () => {
    const template = ALL_NAMES.map((n) => `${n}=\${${n}}`).join("&");
    const expected = ALL_NAMES.map((n) => `${n}=${encodeURIComponent(SAMPLE_VALUES[n] ?? "")}`).join("&");
    expect(render(template, SAMPLE_VALUES)).toBe(expected);
  });

  // encodeURIComponent throws URIError on a lone UTF-16 surrogate (e.g. a user agent cut in the
  // middle of an emoji): one odd value must not crash the whole render.
  it("a value with a lone surrogate does not throw", () => {
    expect(() => render("${clientUserAgent}", { clientUserAgent: "Mozilla \uD83D" })).not.toThrow();
  });

  it("a lone surrogate in a raw placeholder is inserted as is", () => {
    expect(render("{{{clientUserAgent}}}", { clientUserAgent: "x\uD83D" })).toBe("x\uD83D");
  });
});

describe("validateTemplate: placeholders", () => {
  it.each([
    "${click.id}",
    "{{click.id}}",
    "{{{conversion.clickId}}}",
    "${ click.id }",
    "${}",
    "{{}}",
    "{{{}}}",
    "${click id}",
    "${click-id}",
    "${clickId[0]}",
    "${1clickId}",
  ])("refuses %s as not a plain name, naming it as written", (placeholder) => {
    const error = refusal(`https://x.example/pb?c=${placeholder}&e=\${eventName}`);
    expect(error).toBeInstanceOf(PlaceholderError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("PlaceholderError");
    expect(error.placeholder).toBe(placeholder);
    expect(error.message).toContain(`'${placeholder}'`);
    expect(error.message).toMatch(/not a plain name/);
  });

  it.each(["${clickid2}", "{{click_id}}", "{{{foo}}}", "${ ClickIdentifier }", "${constructor}", "${hasOwnProperty}"])(
    "refuses unknown %s, naming it as written",
    (placeholder) => {
      const error = refusal(`https://x.example/pb?c=${placeholder}`);
      expect(error.placeholder).toBe(placeholder);
      expect(error.message).toBe(`Unknown placeholder '${placeholder}'`);
    },
  );

  it("names an unknown placeholder exactly as written", () => {
    expect(refusal("https://x.example/?c=${clickid2}").message).toBe("Unknown placeholder '${clickid2}'");
  });

  it.each([
    ["https://x.example/?a=${clickId}&b=${bad1}&c=${x.y}", "${bad1}"],
    ["https://x.example/?a=${x.y}&b=${bad1}", "${x.y}"],
    ["https://x.example/?a={{{nope}}}&b={{also.bad}}", "{{{nope}}}"],
    ["https://x.example/?a={{ a.b }}&b=${a.b}", "{{ a.b }}"],
    ["${x.y}", "${x.y}"],
  ])("%s: the first bad placeholder is named (%s)", (template, placeholder) => {
    expect(refusal(template).placeholder).toBe(placeholder);
  });

  it("checks placeholders before the URL shape", () => {
    expect(refusal("ftp://x.example/${clickid2}").placeholder).toBe("${clickid2}");
    expect(refusal("${nope}").placeholder).toBe("${nope}");
  });

  it.each([
    "https://x.example/pb?c=${CLICKID}",
    "https://x.example/pb?c={{ClickId}}",
    "https://x.example/pb?c={{{ clickid }}}",
    "https://x.example/pb?b=${brandId}&t=${trafficSourceId}&a=${accountId}&p=${programId}&l=${linkId}&tr=${trackerId}",
  ])("accepts %s", (template) => {
    expect(() => validateTemplate(template)).not.toThrow();
  });

  it.each(ALL_NAMES.map((name) => [name]))("accepts %s in every form and spelling", (name) => {
    for (const form of [`\${${name}}`, `{{${name}}}`, `{{{${name}}}}`, `\${ ${name.toUpperCase()} }`]) {
      expect(() => validateTemplate(`https://x.example/pb?v=${form}`), form).not.toThrow();
    }
  });

  it("accepts single braces and a bare $ that cannot be placeholders", () => {
    for (const template of [
      "https://x.example/?a={x}",
      'https://x.example/?q={"a":1}',
      "https://x.example/?a=$clickId",
    ]) {
      expect(() => validateTemplate(template), template).not.toThrow();
    }
  });

  it("refuses a placeholder that is not closed or is nested, naming where", () => {
    for (const template of [
      "https://x.example/?a=${",
      "https://x.example/?a=${clickId",
      "https://x.example/?a={{clickId}",
      "https://x.example/?a=${${clickId}}",
    ]) {
      const error = refusal(template);
      expect(error.message, template).toMatch(/is not closed or is nested/);
      expect(error.placeholder, template).not.toBeNull();
    }
  });

  it("refuses control characters such as a line break in the host", () => {
    expect(refusal("https://r.exa\nmple/").message).toMatch(/control characters/);
  });
});

describe("validateTemplate: URL shape", () => {
  it.each([
    ["relative path", "/pb?c=${clickId}"],
    ["protocol-relative", "//x.example/pb?c=${clickId}"],
    ["bare host", "x.example/pb?c=${clickId}"],
    ["a placeholder alone", "${clickId}"],
    ["a raw placeholder alone", "{{{clickId}}}"],
    ["empty", ""],
    ["only spaces", "   "],
    ["http:// with empty host", "http://"],
    ["https:// with empty host", "https://"],
    ["http:// with empty host and a path", "http://?c=${clickId}"],
    ["http:// whose host is a missing value", "http://${nope}/x"],
    ["space in the host", "https://exa mple.com/"],
    ["host rendered with an encoded space", "https://${account}/x"],
  ])("refuses %s", (_label, template) => {
    const error = refusal(template);
    expect(error).toBeInstanceOf(PlaceholderError);
    if (tokens(template).every((t) => t.problem === null)) expect(error.placeholder).toBeNull();
  });

  it.each([
    ["ftp://x.example/${clickId}", "ftp"],
    ["javascript:alert(${clickId})", "javascript"],
    ["mailto:a@x.example?subject=${clickId}", "mailto"],
    ["file:///etc/passwd", "file"],
    ["data:text/plain,${clickId}", "data"],
    ["ws://x.example/${clickId}", "ws"],
    ["HTTPX://x.example/", "httpx"],
  ])("refuses %s as not http or https", (template, protocol) => {
    const error = refusal(template);
    expect(error.placeholder).toBeNull();
    expect(error.message).toBe(`URL must be http or https, not ${protocol}`);
  });

  it("the not-absolute message quotes the rendered URL", () => {
    const error = refusal("/pb?c=${clickId}");
    expect(error.placeholder).toBeNull();
    expect(error.message).toBe(
      `URL does not resolve to an absolute http or https address: '/pb?c=${SAMPLE_VALUES.clickId}'`,
    );
  });

  it.each([
    "http://x.example",
    "https://x.example/",
    "HTTPS://X.EXAMPLE/PB",
    "https://x.example:8443/pb?a=1#frag",
    "http://127.0.0.1/pb",
    "http://[::1]/pb",
    "https://user:pass@x.example/pb",
    "https://u:p%40ss@x.example:8443/pb",
    "http://[2001:db8::1]:8080/pb",
  ])("accepts %s and returns the rendered sample", (template) => {
    expect(validateTemplate(template)).toBe(render(template, SAMPLE_VALUES));
  });

  it("returns the rendered sample with sample values encoded or raw per form", () => {
    const template =
      "https://x.example/pb/${clickId}?e={{eventName}}&t=${term}&ua={{{clientUserAgent}}}&ts=${trafficSource}&l=${location}&u=${CLIENTUSERAGENT}";
    const rendered = validateTemplate(template);
    expect(rendered).toBe(
      "https://x.example/pb/clk_06gzyy77kggck3hytbtrc2xp48?e=Deposit&t=casino%20bonus&ua=Mozilla/5.0" +
        "&ts=Google%20Ads&l=https%3A%2F%2Fbrand.example%2Fwelcome&u=Mozilla%2F5.0",
    );
    expect(rendered).toContain(encodeURIComponent(SAMPLE_VALUES.term ?? ""));
    expect(rendered).not.toContain("${");
    expect(rendered).not.toContain("{{");
  });

  it("returns a template without placeholders unchanged", () => {
    expect(validateTemplate("https://x.example/pb?a=1&b=2")).toBe("https://x.example/pb?a=1&b=2");
  });

  it("every sample-filled template naming each placeholder once validates", () => {
    const template = `https://x.example/pb?${ALL_NAMES.map((n) => `${n}={{${n}}}`).join("&")}`;
    const rendered = validateTemplate(template);
    for (const name of ALL_NAMES) {
      expect(rendered).toContain(`${name}=${encodeURIComponent(SAMPLE_VALUES[name] ?? "")}`);
    }
  });

  // Simulate-only names render empty in every live postback, so a URL whose address comes from
  // one would never resolve to an absolute http/https address: validation must refuse it, even
  // though SAMPLE_VALUES fill those names.
  it("a URL built from a simulate-only value is refused", () => {
    refusal("{{{location}}}");
  });

  it("a host built from a simulate-only value is refused", () => {
    refusal("https://{{{medium}}}/pb");
  });

  // The URL parser would accept these; a webhook URL must be written out in full instead.
  it.each(["http:x.example/pb", "http:///x.example/pb", "https:\\\\x.example\\pb", "  https://x.example/pb "])(
    "refuses the loosely written %j",
    (template) => {
      expect(refusal(template).message).toMatch(/^URL does not resolve to an absolute http or https address/);
    },
  );
});

// A value in the scheme, user info, host or port decides where a delivery goes, encoded or not
// (`http://v${parameterA}:43010/` with pa=m went to host `vm`): the origin is written out in full.
describe("validateTemplate: no placeholder of any syntax in the origin", () => {
  it.each([
    ["encoded, inside the host", "http://v${parameterA}:43010/pb", "${parameterA}"],
    ["encoded braces, a host label", "https://{{parameterA}}.r.example/pb", "{{parameterA}}"],
    ["encoded, the port", "https://r.example:${parameterA}/pb", "${parameterA}"],
    ["encoded, the user", "https://${parameterB}@r.example/pb", "${parameterB}"],
    ["encoded, the password", "https://u:{{parameterB}}@r.example/pb", "{{parameterB}}"],
    ["encoded, a value that is never empty", "https://${brand}.r.example/pb", "${brand}"],
    ["raw, inside the host", "https://r.example{{{gclid}}}/pb", "{{{gclid}}}"],
  ])("refuses %s, naming the placeholder", (_label, template, placeholder) => {
    const error = refusal(template);
    expect(error.placeholder).toBe(placeholder);
    expect(error.message).toContain(`'${placeholder}'`);
    expect(error.message).toMatch(/scheme, user info, host or port/);
  });

  it.each([
    ["{x} in the host", "https://r.example{clickId}/pb"],
    ["%7B...%7D in the host", "https://r.example%7BclickId%7D/pb"],
    ["$%7B...%7D in the host", "https://r$%7BclickId%7D.example/pb"],
    ["%7B%7B...%7D%7D in the user info", "https://%7B%7BclickId%7D%7D@r.example/pb"],
    ["%3C...%3E in the host", "https://r.example%3CclickId%3E/pb"],
    ["%5B...%5D in the host", "https://r.example%5BclickId%5D/pb"],
    ["[x] after an IPv6 host", "http://[::1][clickId]/pb"],
  ])("refuses a placeholder of another syntax: %s", (_label, template) => {
    const error = refusal(template);
    expect(error.message).toMatch(/scheme, user info, host or port|does not resolve/);
  });

  it("the same forms stay allowed in the path, query and fragment", () => {
    for (const template of [
      "https://r.example/${parameterA}/pb?c={{clickId}}&r={{{parameterB}}}#${gclid}",
      "https://r.example/%7BclickId%7D?x={clickId}&y=<clickId>&z=[clickId]",
    ]) {
      expect(() => validateTemplate(template), template).not.toThrow();
    }
  });
});

describe("PlaceholderError", () => {
  it("is an Error with a name, a message and the placeholder", () => {
    const error = new PlaceholderError("Unknown placeholder '${x}'", "${x}");
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("PlaceholderError");
    expect(error.message).toBe("Unknown placeholder '${x}'");
    expect(error.placeholder).toBe("${x}");
    expect(new PlaceholderError("URL has no host", null).placeholder).toBeNull();
  });
});
