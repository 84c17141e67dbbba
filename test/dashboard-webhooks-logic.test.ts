/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { describe, expect, it } from "vitest";
import { readableBody } from "../web/src/components/attempt-body.js";
import {
  changesSoon,
  type DeliverySearch,
  deliveryQuery,
  PAGE_SIZE,
  parseAttemptSearch,
  parseDeliverySearch,
  parseWebhookListSearch,
} from "../web/src/pages/webhooks/search.js";
import { formatEventNames, insertToken, parseEventNames, tokenFor } from "../web/src/pages/webhooks/template.js";
import { withOffset } from "../web/src/search-params.js";

// The outgoing webhooks pages' client logic: what an address may say, and the URL template helpers.

describe("delivery log address", () => {
  it("keeps the filters the API offers and drops what it would refuse", () => {
    expect(
      parseDeliverySearch({
        status: "Delivered",
        webhookId: " wh_1 ",
        conversionId: "cnv_2",
        clickId: "clk_3",
        dateFrom: "2026-11-01",
        dateTo: "2026-11-30",
        offset: "100",
      }),
    ).toEqual({
      status: "Delivered",
      webhookId: "wh_1",
      conversionId: "cnv_2",
      clickId: "clk_3",
      dateFrom: "2026-11-01",
      dateTo: "2026-11-30",
      offset: 100,
    });
    expect(
      parseDeliverySearch({
        status: "delivered",
        webhookId: "",
        conversionId: "x".repeat(101),
        dateFrom: "2026-02-31",
        dateTo: "yesterday",
        offset: -5,
      }),
    ).toEqual({});
    // A from after the to names no day: both are dropped rather than sent to be refused.
    expect(parseDeliverySearch({ dateFrom: "2026-12-01", dateTo: "2026-11-01" })).toEqual({});
    expect(parseDeliverySearch({ offset: 0 })).toEqual({});
    expect(parseDeliverySearch({ offset: 1.5 })).toEqual({});
  });

  it("asks the API for a page of the filtered log", () => {
    expect(deliveryQuery({ status: "Failed", offset: 50 })).toEqual({ status: "Failed", offset: 50, limit: PAGE_SIZE });
    expect(deliveryQuery({})).toEqual({ offset: 0, limit: PAGE_SIZE });
  });

  it("moves to another page without an offset on the first", () => {
    expect(withOffset<DeliverySearch>({ status: "Queued", offset: 50 }, 0)).toEqual({ status: "Queued" });
    expect(withOffset<DeliverySearch>({ status: "Queued" }, 100)).toEqual({ status: "Queued", offset: 100 });
  });
});

describe("webhook list and attempts addresses", () => {
  it("reads a status, a name search and an offset", () => {
    expect(parseWebhookListSearch({ status: "Suspended", search: "  crm ", offset: 50 })).toEqual({
      status: "Suspended",
      search: "crm",
      offset: 50,
    });
    expect(parseWebhookListSearch({ status: "Paused", search: "   ", offset: "x" })).toEqual({});
    expect(parseAttemptSearch({ offset: "20" })).toEqual({ offset: 20 });
    expect(parseAttemptSearch({ offset: "-20" })).toEqual({});
  });
});

describe("URL template helpers", () => {
  it("writes a name in each of the three syntaxes the engine accepts", () => {
    expect(tokenFor("dollar", "clickId")).toBe("${clickId}");
    expect(tokenFor("braces", "clickId")).toBe("{{clickId}}");
    expect(tokenFor("raw", "clickId")).toBe("{{{clickId}}}");
  });

  it("inserts a placeholder at the caret, or in place of the selection", () => {
    expect(insertToken("https://x.example/pb?c=", 23, 23, "{{clickId}}")).toEqual({
      text: "https://x.example/pb?c={{clickId}}",
      caret: 34,
    });
    expect(insertToken("https://x.example/pb?c=OLD&v=1", 23, 26, "{{clickId}}")).toEqual({
      text: "https://x.example/pb?c={{clickId}}&v=1",
      caret: 34,
    });
    // A caret beyond the text (the field changed since) appends.
    expect(insertToken("ab", 10, 12, "X")).toEqual({ text: "abX", caret: 3 });
  });

  it("reads event names one Type=name a line and says which line is wrong", () => {
    expect(parseEventNames("Signup=lead\n\n Deposit = ftd purchase \n")).toEqual({
      names: { Signup: "lead", Deposit: "ftd purchase" },
    });
    expect(parseEventNames("")).toEqual({ names: {} });
    expect(parseEventNames("Signup=lead\nDeposit")).toEqual({
      error: "Line 2: write it as Type=event name, e.g. Signup=lead.",
    });
    expect(parseEventNames("Signup=a\nSignup=b")).toEqual({ error: "Line 2: Signup is named twice." });
    expect(formatEventNames({ Signup: "lead", Deposit: "ftd" })).toBe("Signup=lead\nDeposit=ftd");
    const round = parseEventNames(formatEventNames({ Signup: "lead=1" }));
    expect(round).toEqual({ names: { Signup: "lead=1" } });
  });
});

describe("attempt bodies", () => {
  it("indents JSON and leaves anything else, a cut-off JSON body included, as it was sent", () => {
    expect(readableBody('{"a":1,"b":[true]}')).toBe('{\n  "a": 1,\n  "b": [\n    true\n  ]\n}');
    expect(readableBody("ok")).toBe("ok");
    expect(readableBody('{"a":"cut off')).toBe('{"a":"cut off');
    expect(readableBody("")).toBe("");
  });
});

describe("which events a page watches", () => {
  const now = Date.parse("2026-11-26T10:00:00Z");
  const at = (ms: number) => new Date(now + ms).toISOString();
  it("watches a queued event and a retry due within a minute, not one due in an hour or a finished one", () => {
    expect(changesSoon({ status: "Queued", nextAttemptAt: null }, now)).toBe(true);
    expect(changesSoon({ status: "Retrying", nextAttemptAt: at(30_000) }, now)).toBe(true);
    expect(changesSoon({ status: "Retrying", nextAttemptAt: at(-5_000) }, now)).toBe(true);
    expect(changesSoon({ status: "Retrying", nextAttemptAt: at(3_600_000) }, now)).toBe(false);
    expect(changesSoon({ status: "Delivered", nextAttemptAt: null }, now)).toBe(false);
    expect(changesSoon({ status: "Held", nextAttemptAt: at(1_000) }, now)).toBe(false);
  });
});
