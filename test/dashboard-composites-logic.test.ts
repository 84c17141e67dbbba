import { describe, expect, it } from "vitest";
import { metricColumns, SORT_OPTIONS } from "../web/src/pages/composites/metrics.js";
import {
  changed,
  compositeQuery,
  PAGE_SIZE,
  parseCompositeSearch,
  periodsOf,
  sortByParam,
  sortOf,
  withPeriod,
} from "../web/src/pages/composites/search.js";
import { withOffset } from "../web/src/search-params.js";

// The accounts page's URL state and how it becomes the composite endpoints' query.

const NOW = Date.parse("2026-11-26T15:00:00Z");

describe("composites URL state", () => {
  it("keeps only what makes sense", () => {
    expect(
      parseCompositeSearch({
        from: "2026-11-01",
        to: "2026-11-10",
        compareFrom: "2026-10-01",
        compareTo: "2026-10-10",
        sort: "commission",
        dir: "asc",
        q: "  velvet ",
        status: "inactive",
        offset: 50,
      }),
    ).toEqual({
      from: "2026-11-01",
      to: "2026-11-10",
      compareFrom: "2026-10-01",
      compareTo: "2026-10-10",
      sort: "commission",
      dir: "asc",
      q: "velvet",
      status: "inactive",
      offset: 50,
    });
    // A reversed or impossible range, an unknown sort, a sort the API refuses, a bad offset: dropped.
    expect(
      parseCompositeSearch({
        from: "2026-11-10",
        to: "2026-11-01",
        compareFrom: "2026-02-30",
        compareTo: "2026-03-01",
        sort: "conversionRate",
        dir: "up",
        q: "   ",
        status: "deleted",
        offset: -5,
      }),
    ).toEqual({});
    expect(parseCompositeSearch({ q: 123, offset: "25" })).toEqual({ q: "123", offset: 25 });
    expect(parseCompositeSearch({ q: "x".repeat(300) }).q).toHaveLength(200);
  });

  it("defaults to the last 30 days against the 30 before", () => {
    expect(periodsOf({}, "UTC", NOW)).toEqual({
      range: { from: "2026-10-28", to: "2026-11-26" },
      comparison: { from: "2026-09-28", to: "2026-10-27" },
      previous: true,
    });
    expect(periodsOf({ from: "2026-11-20", to: "2026-11-26" }, "UTC", NOW).comparison).toEqual({
      from: "2026-11-13",
      to: "2026-11-19",
    });
    expect(
      periodsOf(
        { from: "2026-11-20", to: "2026-11-26", compareFrom: "2025-11-20", compareTo: "2025-11-26" },
        "UTC",
        NOW,
      ),
    ).toEqual({
      range: { from: "2026-11-20", to: "2026-11-26" },
      comparison: { from: "2025-11-20", to: "2025-11-26" },
      previous: false,
    });
  });

  it("speaks the API's sortBy both ways", () => {
    expect(sortOf({})).toEqual({ by: "clicks", direction: "desc" });
    expect(sortOf({ sort: "name" })).toEqual({ by: "name", direction: "asc" });
    expect(sortByParam({ by: "clicks", direction: "desc" })).toBe("clicks");
    expect(sortByParam({ by: "clicks", direction: "asc" })).toBe("+clicks");
    expect(sortByParam({ by: "name", direction: "asc" })).toBe("name");
    expect(sortByParam({ by: "name", direction: "desc" })).toBe("-name");
  });

  it("asks the endpoint for one page of the whole filtered set", () => {
    expect(
      compositeQuery({ q: "velvet", status: "active", offset: 25, sort: "signups", dir: "asc" }, "UTC", NOW),
    ).toEqual({
      metricsFrom: "2026-10-28",
      metricsTo: "2026-11-26",
      comparisonFrom: "2026-09-28",
      comparisonTo: "2026-10-27",
      sortBy: "+signups",
      offset: 25,
      limit: PAGE_SIZE,
      search: "velvet",
      status: "active",
      timeZone: "UTC",
    });
  });

  it("starts at the first page again on any change but paging", () => {
    const search = { q: "a", offset: 50, sort: "clicks" as const };
    expect(changed(search, { q: undefined })).toEqual({ sort: "clicks" });
    expect(withOffset(search, 75)).toEqual({ ...search, offset: 75 });
    expect(withOffset(search, 0)).toEqual({ q: "a", sort: "clicks" });
    expect(
      withPeriod(
        { ...search, compareFrom: "2026-01-01", compareTo: "2026-01-02" },
        { from: "2026-11-01", to: "2026-11-02" },
      ),
    ).toEqual({
      q: "a",
      sort: "clicks",
      from: "2026-11-01",
      to: "2026-11-02",
    });
  });

  it("shows the sort metric's column and offers every order the API has", () => {
    expect(metricColumns("clicks").map((c) => c.name)).toEqual([
      "clicks",
      "signups",
      "firstTimeDeposit",
      "qualifiers",
      "commission",
      "conversionRate",
    ]);
    expect(metricColumns("flatFeeCommission").map((c) => c.name)).toContain("flatFeeCommission");
    expect(SORT_OPTIONS.map((o) => o.key).sort()).toEqual(
      [
        "name",
        "clicks",
        "signups",
        "firstTimeDeposit",
        "qualifiers",
        "cpaCommission",
        "revShareCommission",
        "flatFeeCommission",
        "commission",
      ].sort(),
    );
  });
});
