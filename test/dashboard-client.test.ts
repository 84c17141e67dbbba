import { describe, expect, it } from "vitest";
import { daysOf, isDay, lastDays, lengthInDays, previousPeriod } from "../web/src/dates.js";
import { formatChange, formatLabel } from "../web/src/format.js";

// The dashboard's own logic (web/src): the ranges it asks the reports for, and how it reads a change.
describe("dashboard date ranges", () => {
  const now = Date.parse("2026-03-01T23:30:00Z");

  it("counts the last n UTC days, today included", () => {
    expect(lastDays(7, now)).toEqual({ from: "2026-02-23", to: "2026-03-01" });
    expect(lastDays(1, now)).toEqual({ from: "2026-03-01", to: "2026-03-01" });
    expect(lengthInDays(lastDays(30, now))).toBe(30);
  });

  it("compares with the period of the same length just before", () => {
    expect(previousPeriod({ from: "2026-02-23", to: "2026-03-01" })).toEqual({ from: "2026-02-16", to: "2026-02-22" });
    // Across a leap day and a month end.
    expect(previousPeriod({ from: "2028-03-01", to: "2028-03-31" })).toEqual({ from: "2028-01-30", to: "2028-02-29" });
    expect(previousPeriod({ from: "2026-01-01", to: "2026-01-01" })).toEqual({ from: "2025-12-31", to: "2025-12-31" });
  });

  it("lists every day of a range for the chart", () => {
    expect(daysOf({ from: "2026-02-27", to: "2026-03-02" })).toEqual([
      "2026-02-27",
      "2026-02-28",
      "2026-03-01",
      "2026-03-02",
    ]);
  });

  it("accepts only real calendar days in the address", () => {
    expect(isDay("2026-02-28")).toBe(true);
    expect(isDay("2026-13-01")).toBe(false);
    expect(isDay("2026-02-31")).toBe(false);
    expect(isDay("2026-2-1")).toBe(false);
    expect(isDay("2026-02-28T00:00:00Z")).toBe(false);
    expect(isDay(20260228)).toBe(false);
  });
});

describe("dashboard change against the previous period", () => {
  it("reads as a signed percentage, a multiple beyond ten times, nothing without a previous value", () => {
    expect(formatChange(150, 100)).toBe("+50%");
    expect(formatChange(75, 100)).toBe("-25%");
    expect(formatChange(100, 100)).toBe("0%");
    expect(formatChange(19_982, 18)).toBe("+19,964");
    expect(formatChange(4_000, 5)).toBe("+3,995");
    expect(formatChange(55, 5)).toBe("+1,000%");
    expect(formatChange(5, 0)).toBe("new");
    expect(formatChange(0, 0)).toBe("no change");
  });
});

describe("dashboard detail labels", () => {
  it("reads an issue detail's key as words", () => {
    expect(formatLabel("lastError")).toBe("Last error");
    expect(formatLabel("failures")).toBe("Failures");
    expect(formatLabel("expires_at")).toBe("Expires at");
    expect(formatLabel("httpStatus")).toBe("Http status");
  });
});
