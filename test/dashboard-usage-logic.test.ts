import { describe, expect, it } from "vitest";
import { parseSort, validateUsageSearch } from "../web/src/pages/usage/search.js";

describe("usage page address", () => {
  it("keeps a day interval, a key id and the tables' orders", () => {
    expect(
      validateUsageSearch({ interval: "day", key: " tok_1 ", endpointSort: "calls.asc", keySort: "label.desc" }),
    ).toEqual({ interval: "day", key: "tok_1", endpointSort: "calls.asc", keySort: "label.desc" });
  });

  it("drops what the page would not ask the API for", () => {
    expect(
      validateUsageSearch({ interval: "hour", key: "x".repeat(101), endpointSort: "share.desc", keySort: "calls" }),
    ).toEqual({});
    expect(validateUsageSearch({ interval: ["day"], key: 12, endpointSort: "calls.up" })).toEqual({});
  });

  it("reads an order as column and direction", () => {
    expect(parseSort("calls.desc")).toEqual({ by: "calls", direction: "desc" });
    expect(parseSort("label.asc")).toEqual({ by: "label", direction: "asc" });
    expect(parseSort("calls")).toBeUndefined();
    expect(parseSort(undefined)).toBeUndefined();
  });
});
