import { describe, expect, it } from "vitest";
import { compositeQuery, parseCompositeSearch, periodSearch, periodsOf } from "../web/src/pages/composites/search.js";
import { conversionQuery } from "../web/src/pages/conversions/search.js";
import { formatField, formatHour } from "../web/src/pages/reports/labels.js";
import {
  defaultState,
  joinBound,
  type ReportState,
  readBound,
  readSearch,
  rowsQuery,
  splitBound,
  wallBound,
  windowQuery,
  writeSearch,
} from "../web/src/pages/reports/report-state.js";
import { bucketLabel } from "../web/src/pages/usage/buckets.js";
import { addDays, isReadableZone, localToday, PERIOD_PRESETS, presetRange, wallTime } from "../web/src/periods.js";
import { timeZoneParam } from "../web/src/search-params.js";
import { listedSpelling, listedTimeZones, zoneChoices } from "../web/src/time-zones.js";

// Time zones on the dashboard: the periods it offers as days where the chosen zone's clock is,
// the zone in each page's address, and the timeZone parameter every report is asked with.

/** 23:30 UTC on 26 November 2026: already the 27th in Tokyo, still the 26th in New York. */
const LATE = Date.parse("2026-11-26T23:30:00Z");

describe("today where a zone's clock is", () => {
  it("is the local date of the zone, not of UTC or of this machine", () => {
    expect(localToday("UTC", LATE)).toBe("2026-11-26");
    expect(localToday("Asia/Tokyo", LATE)).toBe("2026-11-27");
    expect(localToday("America/New_York", LATE)).toBe("2026-11-26");
    // 02:00 UTC on the 27th is still the evening of the 26th in New York.
    expect(localToday("America/New_York", Date.parse("2026-11-27T02:00:00Z"))).toBe("2026-11-26");
    // The zones furthest apart: 25 hours between them, two dates at once.
    expect(localToday("Pacific/Kiritimati", Date.parse("2026-11-26T10:30:00Z"))).toBe("2026-11-27");
    expect(localToday("Pacific/Pago_Pago", Date.parse("2026-11-26T10:30:00Z"))).toBe("2026-11-25");
  });

  it("turns at local midnight in zones at half and quarter hours", () => {
    // India is UTC+05:30, Nepal UTC+05:45: their midnight is 18:30 and 18:15 UTC.
    expect(localToday("Asia/Kolkata", Date.parse("2026-11-26T18:29:59Z"))).toBe("2026-11-26");
    expect(localToday("Asia/Kolkata", Date.parse("2026-11-26T18:30:00Z"))).toBe("2026-11-27");
    expect(localToday("Asia/Kathmandu", Date.parse("2026-11-26T18:14:59Z"))).toBe("2026-11-26");
    expect(localToday("Asia/Kathmandu", Date.parse("2026-11-26T18:15:00Z"))).toBe("2026-11-27");
  });

  it("reads the wall clock across a change of offset", () => {
    // New York goes back an hour on 1 November 2026: 01:30 comes twice, an hour apart.
    expect(wallTime(Date.parse("2026-11-01T05:30:00Z"), "America/New_York")).toBe("2026-11-01T01:30:00");
    expect(wallTime(Date.parse("2026-11-01T06:30:00Z"), "America/New_York")).toBe("2026-11-01T01:30:00");
    // It goes forward on 8 March: 02:30 never comes.
    expect(wallTime(Date.parse("2026-03-08T07:30:00Z"), "America/New_York")).toBe("2026-03-08T03:30:00");
    expect(wallTime(Date.parse("2026-11-26T00:00:00Z"), "UTC")).toBe("2026-11-26T00:00:00");
  });

  it("takes a zone this browser cannot read as UTC (the API refuses it by name)", () => {
    expect(isReadableZone("Mars/Base")).toBe(false);
    expect(isReadableZone("europe/berlin")).toBe(true);
    expect(localToday("Mars/Base", LATE)).toBe("2026-11-26");
  });
});

describe("the periods offered", () => {
  it("are today, yesterday, this month, last month and the last 7, 30 and 90 days", () => {
    expect([...PERIOD_PRESETS]).toEqual(["today", "yesterday", "thisMonth", "lastMonth", "7d", "30d", "90d"]);
  });

  it("are days of the zone: in Tokyo a day ahead of New York at the same instant", () => {
    const inTokyo = Object.fromEntries(PERIOD_PRESETS.map((p) => [p, presetRange(p, "Asia/Tokyo", LATE)]));
    expect(inTokyo).toEqual({
      today: { from: "2026-11-27", to: "2026-11-27" },
      yesterday: { from: "2026-11-26", to: "2026-11-26" },
      thisMonth: { from: "2026-11-01", to: "2026-11-27" },
      lastMonth: { from: "2026-10-01", to: "2026-10-31" },
      "7d": { from: "2026-11-21", to: "2026-11-27" },
      "30d": { from: "2026-10-29", to: "2026-11-27" },
      "90d": { from: "2026-08-30", to: "2026-11-27" },
    });
    expect(presetRange("today", "America/New_York", LATE)).toEqual({ from: "2026-11-26", to: "2026-11-26" });
    expect(presetRange("7d", "America/New_York", LATE)).toEqual({ from: "2026-11-20", to: "2026-11-26" });
  });

  it("put this month and last month where the zone's date is, across year ends and leap days", () => {
    // 03:00 UTC on 1 March 2028 is still 29 February in New York (a leap year).
    const march = Date.parse("2028-03-01T03:00:00Z");
    expect(presetRange("thisMonth", "UTC", march)).toEqual({ from: "2028-03-01", to: "2028-03-01" });
    expect(presetRange("lastMonth", "UTC", march)).toEqual({ from: "2028-02-01", to: "2028-02-29" });
    expect(presetRange("thisMonth", "America/New_York", march)).toEqual({ from: "2028-02-01", to: "2028-02-29" });
    expect(presetRange("lastMonth", "America/New_York", march)).toEqual({ from: "2028-01-01", to: "2028-01-31" });
    expect(presetRange("yesterday", "America/New_York", march)).toEqual({ from: "2028-02-28", to: "2028-02-28" });
    // The first of January: last month is December of the year before.
    const newYear = Date.parse("2027-01-01T12:00:00Z");
    expect(presetRange("lastMonth", "Europe/Berlin", newYear)).toEqual({ from: "2026-12-01", to: "2026-12-31" });
    expect(presetRange("yesterday", "Europe/Berlin", newYear)).toEqual({ from: "2026-12-31", to: "2026-12-31" });
  });

  it("count calendar days, so a week over a change of offset is still seven days", () => {
    const afterSpringForward = Date.parse("2026-03-10T12:00:00Z");
    expect(presetRange("7d", "America/New_York", afterSpringForward)).toEqual({
      from: "2026-03-04",
      to: "2026-03-10",
    });
    expect(addDays("2028-02-28", 1)).toBe("2028-02-29");
    expect(addDays("2026-03-01", -1)).toBe("2026-02-28");
    expect(addDays("2026-01-01", -1)).toBe("2025-12-31");
  });
});

describe("the zones offered", () => {
  it("put the account's, this browser's and UTC first, said why, then every listed zone once", () => {
    const choices = zoneChoices("Europe/Berlin", "Asia/Tokyo");
    expect(choices.slice(0, 3)).toEqual([
      { zone: "Europe/Berlin", note: "The account's time zone" },
      { zone: "Asia/Tokyo", note: "This browser's time zone" },
      { zone: "UTC", note: "Coordinated Universal Time" },
    ]);
    const zones = choices.map((c) => c.zone);
    expect(new Set(zones).size).toBe(zones.length);
    expect(zones.slice(3)).toEqual([...zones.slice(3)].sort());
    expect(new Set(zones)).toEqual(new Set(listedTimeZones()));
    expect(zones).toContain("America/New_York");
  });

  it("name one zone once when the account's is the browser's", () => {
    const choices = zoneChoices("UTC", "UTC");
    expect(choices[0]).toEqual({
      zone: "UTC",
      note: "The account's and this browser's time zone",
    });
    expect(choices.filter((c) => c.zone === "UTC")).toHaveLength(1);
    expect(zoneChoices(undefined, "Asia/Kolkata")[0]).toEqual({
      zone: "Asia/Kolkata",
      note: "This browser's time zone",
    });
  });

  it("spell a name as it is listed, in any case", () => {
    expect(listedSpelling("asia/tokyo")).toBe("Asia/Tokyo");
    expect(listedSpelling("utc")).toBe("UTC");
    expect(listedSpelling("Mars/Base")).toBe("Mars/Base");
  });
});

describe("the zone in a page's address", () => {
  it("keeps an IANA name in its listed spelling, and a name of that shape for the API to judge", () => {
    expect(timeZoneParam("asia/tokyo")).toBe("Asia/Tokyo");
    expect(timeZoneParam(" Europe/Berlin ")).toBe("Europe/Berlin");
    expect(timeZoneParam("UTC")).toBe("UTC");
    expect(timeZoneParam("Etc/GMT+5")).toBe("Etc/GMT+5");
    expect(timeZoneParam("America/Argentina/Buenos_Aires")).toBe("America/Argentina/Buenos_Aires");
    expect(timeZoneParam("Mars/Base")).toBe("Mars/Base");
  });

  it("leaves out what no zone is: an offset, a number, a path, too long a name", () => {
    expect(timeZoneParam("+05:30")).toBeUndefined();
    expect(timeZoneParam(530)).toBeUndefined();
    expect(timeZoneParam("../etc")).toBeUndefined();
    expect(timeZoneParam("Europe//Berlin")).toBeUndefined();
    expect(timeZoneParam("")).toBeUndefined();
    expect(timeZoneParam(`A/${"b".repeat(63)}`)).toBeUndefined();
  });
});

describe("reports in a zone", () => {
  const TOKYO = { now: LATE, zone: "Asia/Tokyo" };

  it("keep the zone and the hour breakdown in the address, and name a bad zone", () => {
    const state: ReportState = { ...defaultState(), fields: ["hour"], range: "thisMonth", timeZone: "Asia/Tokyo" };
    expect(writeSearch(state)).toEqual({ fields: "hour", range: "thisMonth", tz: "Asia/Tokyo" });
    expect(readSearch(writeSearch(state))).toEqual({ state, notes: [] });
    expect(readSearch({ tz: "america/new_york" }).state.timeZone).toBe("America/New_York");
    const bad = readSearch({ tz: "+05:30", range: "lastMonth" });
    expect(bad.state.timeZone).toBeUndefined();
    expect(bad.state.range).toBe("lastMonth");
    expect(bad.notes).toEqual([
      "tz '+05:30' is not a time zone name (such as Europe/Berlin): the account's time zone shown.",
    ]);
  });

  it("send a preset as the zone's days, with the zone", () => {
    const state: ReportState = { ...defaultState(), fields: ["hour"], range: "today" };
    expect(rowsQuery(state, TOKYO)).toEqual({
      fields: "hour",
      conversionDateFrom: "2026-11-27",
      conversionDateTo: "2026-11-27",
      timeZone: "Asia/Tokyo",
      offset: 0,
      limit: 100,
    });
    expect(windowQuery({ ...state, range: "yesterday" }, { now: LATE, zone: "America/New_York" })).toEqual({
      conversionDateFrom: "2026-11-25",
      conversionDateTo: "2026-11-25",
    });
    expect(windowQuery({ ...state, range: "lastMonth" }, TOKYO)).toEqual({
      conversionDateFrom: "2026-10-01",
      conversionDateTo: "2026-10-31",
    });
  });

  it("read custom times on the zone's clock: wall times as they are, an instant from a link where the clock was", () => {
    expect(readBound("2026-11-01T10:00")).toBe("2026-11-01T10:00");
    expect(readBound("2026-11-01T10:00:30")).toBe("2026-11-01T10:00:30");
    expect(readBound("2026-11-01T24:00")).toBeUndefined();
    expect(readBound("2026-02-30T10:00")).toBeUndefined();
    expect(joinBound("2026-11-01", "10:00")).toBe("2026-11-01T10:00");
    expect(joinBound("2026-11-01", "")).toBe("2026-11-01");
    expect(joinBound("", "10:00")).toBeUndefined();
    expect(splitBound("2026-11-01T10:00", "Asia/Tokyo")).toEqual({ day: "2026-11-01", time: "10:00" });
    // 23:30 UTC is 08:30 the next morning in Tokyo.
    expect(splitBound("2026-11-26T23:30:00Z", "Asia/Tokyo")).toEqual({ day: "2026-11-27", time: "08:30" });
    expect(splitBound("2026-11-26T23:30:00Z", "UTC")).toEqual({ day: "2026-11-26", time: "23:30" });
    expect(wallBound("2026-11-26", "Asia/Tokyo")).toBe("2026-11-26");
    const custom: ReportState = { ...defaultState(), range: "custom", from: "2026-11-01T10:00", to: "2026-11-02" };
    expect(readSearch(writeSearch(custom))).toEqual({ state: custom, notes: [] });
    expect(windowQuery(custom, TOKYO)).toEqual({
      conversionDateFrom: "2026-11-01T10:00",
      conversionDateTo: "2026-11-02",
    });
  });

  it("show an hour with its offset, so the hour that comes twice reads twice", () => {
    expect(formatHour("2026-11-01T01:00-04:00")).toBe("2026-11-01 01:00 (-04:00)");
    expect(formatHour("2026-11-01T01:00-05:00")).toBe("2026-11-01 01:00 (-05:00)");
    expect(formatHour("2026-11-01T10:00+05:45")).toBe("2026-11-01 10:00 (+05:45)");
    expect(formatHour("2026-11-01T10:00Z")).toBe("2026-11-01 10:00 (+00:00)");
    expect(formatField("hour", "2026-11-01T10:00+01:00")).toBe("2026-11-01 10:00 (+01:00)");
    expect(formatField("hour", "not an hour")).toBe("not an hour");
    expect(formatField("date", "2026-11-01")).toBe("2026-11-01");
  });
});

describe("accounts and links, conversions and usage in a zone", () => {
  it("ask the composites for the zone's last 30 days, and carry the zone to an account's links", () => {
    const search = parseCompositeSearch({ tz: "asia/tokyo", currency: "eur" });
    expect(search).toEqual({ tz: "Asia/Tokyo", currency: "EUR" });
    expect(periodsOf(search, "Asia/Tokyo", LATE).range).toEqual({ from: "2026-10-29", to: "2026-11-27" });
    expect(compositeQuery(search, "Asia/Tokyo", LATE)).toMatchObject({
      metricsFrom: "2026-10-29",
      metricsTo: "2026-11-27",
      comparisonFrom: "2026-09-29",
      comparisonTo: "2026-10-28",
      timeZone: "Asia/Tokyo",
    });
    expect(compositeQuery({}, "America/New_York", LATE)).toMatchObject({
      metricsTo: "2026-11-26",
      timeZone: "America/New_York",
    });
    expect(periodSearch({ ...search, q: "x", offset: 25 })).toEqual({ tz: "Asia/Tokyo", currency: "EUR" });
    expect(parseCompositeSearch({ tz: "+01:00" })).toEqual({});
  });

  it("filter conversions by the account's days when its zone is known", () => {
    expect(conversionQuery({ from: "2026-11-01" }, "Europe/Berlin")).toMatchObject({
      dateFrom: "2026-11-01",
      timeZone: "Europe/Berlin",
    });
    expect(conversionQuery({ from: "2026-11-01" })).not.toHaveProperty("timeZone");
  });

  it("label usage buckets on the clock of the answer's zone", () => {
    // Berlin's 26 November starts at 23:00 UTC on the 25th.
    expect(bucketLabel("2026-11-25T23:00:00.000Z", "day", "Europe/Berlin")).toBe("2026-11-26");
    expect(bucketLabel("2026-11-25T23:00:00.000Z", "day", "UTC")).toBe("2026-11-25");
    expect(bucketLabel("2026-11-26T04:30:00.000Z", "hour", "Asia/Kolkata")).toBe("11-26 10:00");
  });
});
