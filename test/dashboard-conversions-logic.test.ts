import { describe, expect, it } from "vitest";
import {
  type ConversionSearch,
  conversionQuery,
  PAGE_SIZE,
  parseConversionSearch,
  shortDateTime,
  statusLabel,
  statusList,
  typeLabel,
  withFilters,
} from "../web/src/pages/conversions/search.js";
import { withOffset } from "../web/src/search-params.js";

// The conversions list's URL state and how it becomes GET /api/v1/conversions's query.

describe("conversions URL state", () => {
  it("keeps only filters the API accepts", () => {
    expect(
      parseConversionSearch({
        from: "2026-11-01",
        to: "2026-11-02",
        type: "Deposit",
        clickId: " clk_1 ",
        offset: "25",
      }),
    ).toEqual({ from: "2026-11-01", to: "2026-11-02", type: "Deposit", clickId: "clk_1", offset: 25 });
    expect(parseConversionSearch({ from: "2026-13-01", type: "deposit", clickId: "", offset: 1.5 })).toEqual({});
    // A reversed range keeps its start.
    expect(parseConversionSearch({ from: "2026-11-02", to: "2026-11-01" })).toEqual({ from: "2026-11-02" });
    expect(parseConversionSearch({ clickId: 42 })).toEqual({ clickId: "42" });
  });

  it("asks for one page with the filters set", () => {
    expect(conversionQuery({})).toEqual({ offset: 0, limit: PAGE_SIZE });
    expect(
      conversionQuery({ from: "2026-11-01", to: "2026-11-02", type: "Signup", clickId: "clk_1", offset: 50 }),
    ).toEqual({
      offset: 50,
      limit: PAGE_SIZE,
      dateFrom: "2026-11-01",
      dateTo: "2026-11-02",
      type: "Signup",
      clickId: "clk_1",
    });
  });

  it("starts at the first page on new filters and leaves empty ones out", () => {
    expect(withFilters({ type: "Deposit", clickId: undefined })).toEqual({ type: "Deposit" });
    expect(withOffset<ConversionSearch>({ type: "Deposit", offset: 25 }, 0)).toEqual({ type: "Deposit" });
    expect(withOffset<ConversionSearch>({ type: "Deposit" }, 25)).toEqual({ type: "Deposit", offset: 25 });
  });

  it("reads types and times as a person would", () => {
    expect(typeLabel("FirstTimeDeposit")).toBe("First-time deposit");
    expect(typeLabel("CpaCommission")).toBe("CPA commission");
    expect(typeLabel("Unknown")).toBe("Unknown");
    expect(shortDateTime("2026-11-26T09:59:30.123Z")).toBe("2026-11-26 09:59");
  });

  it("keeps the statuses filter as the API reads it: a comma list, in order, any case in", () => {
    expect(parseConversionSearch({ status: "Reversed,pending" })).toEqual({ status: "pending,reversed" });
    expect(parseConversionSearch({ status: ["rejected", "REVERSED"] })).toEqual({ status: "rejected,reversed" });
    // Unknown names are left out; nothing known leaves the address.
    expect(parseConversionSearch({ status: "pending,paid" })).toEqual({ status: "pending" });
    expect(parseConversionSearch({ status: "paid" })).toEqual({});
    expect(parseConversionSearch({ status: 7 })).toEqual({});
    expect(withFilters({ status: ["reversed", "approved"], type: "Deposit" })).toEqual({
      type: "Deposit",
      status: "approved,reversed",
    });
    expect(withFilters({ status: [] })).toEqual({});
    expect(conversionQuery({ status: "rejected" })).toEqual({ offset: 0, limit: PAGE_SIZE, status: "rejected" });
    expect(statusList("approved, Pending")).toEqual(["pending", "approved"]);
    expect(statusLabel("reversed")).toBe("Reversed");
    expect(statusLabel("other")).toBe("other");
  });
});
