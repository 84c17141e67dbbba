import { describe, expect, it } from "vitest";
import { FIELDS as API_FIELDS } from "../src/features/reports/performance.js";
import { STATS as API_STATS } from "../src/features/reports/stats.js";
import { buildCsv, csvCell } from "../web/src/csv.js";
import { chartData, splitFieldOf, TOP_SERIES } from "../web/src/pages/reports/chart-series.js";
import { clicksSearch } from "../web/src/pages/reports/clicks-link.js";
import {
  byKey,
  comparisonRowsQuery,
  comparisonWindow,
  rowKey,
  rowsComparable,
} from "../web/src/pages/reports/comparison.js";
import { narrowTo } from "../web/src/pages/reports/drill.js";
import {
  chartQuery,
  defaultState,
  FIELDS,
  type ReportState,
  readBound,
  readSearch,
  rowsQuery,
  STATS,
  totalsQuery,
  validateReportSearch,
  withColumns,
  writeSearch,
} from "../web/src/pages/reports/report-state.js";

// The reports page's own logic (web/src/pages/reports): its state in the address, and its CSV.

/** The search params as a shared link carries them: every value a string. */
const asLink = (state: ReportState) =>
  Object.fromEntries(
    new URLSearchParams(Object.entries(writeSearch(state)).map(([k, v]) => [k, String(v)])).entries(),
  ) as Record<string, string>;

describe("reports: state in the address", () => {
  it("names the same breakdowns and stats as the API", () => {
    expect([...FIELDS]).toEqual(API_FIELDS.map((f) => f.name));
    expect([...STATS]).toEqual(API_STATS.map((s) => s.name));
  });

  it("round-trips every kind of state through a link", () => {
    const states: ReportState[] = [
      defaultState(),
      {
        fields: ["brand", "date"],
        stats: ["clicks", "commission", "conversionRate"],
        range: "custom",
        from: "2026-11-01",
        to: "2026-11-02T01:30:00Z",
        filters: { brandId: 3, trafficSourceId: 12 },
        sort: { key: "commission", direction: "asc" },
        offset: 200,
        limit: 50,
        chart: "commission",
      },
      { ...defaultState(), fields: ["account"], range: "7d", sort: { key: "account", direction: "desc" } },
      { ...defaultState(), range: "custom", from: "2026-11-01T23:00:00.250Z" },
      {
        ...defaultState(),
        fields: ["month"],
        stats: ["epc"],
        range: "yesterday",
        sort: { key: "epc", direction: "desc" },
      },
    ];
    for (const state of states) {
      const { state: read, notes } = readSearch(asLink(state));
      expect(notes).toEqual([]);
      expect(read).toEqual(state);
      // The router's validation keeps a valid state as it is.
      expect(validateReportSearch(writeSearch(state))).toEqual(writeSearch(state));
    }
  });

  it("writes sorts in the API's syntax and leaves defaults out", () => {
    const state: ReportState = {
      ...defaultState(),
      fields: ["date"],
      sort: { key: "clicks", direction: "asc" },
    };
    expect(writeSearch(state)).toEqual({ fields: "date", sortBy: "+clicks" });
    expect(writeSearch({ ...state, sort: { key: "clicks", direction: "desc" } }).sortBy).toBe("clicks");
    expect(writeSearch({ ...state, sort: { key: "date", direction: "asc" } }).sortBy).toBe("date");
    expect(writeSearch({ ...state, sort: { key: "date", direction: "desc" } }).sortBy).toBe("-date");
    expect(writeSearch(defaultState())).toEqual({});
  });

  it("reads what the router parsed (numbers as numbers) and the API's aliases", () => {
    const { state, notes } = readSearch({ fields: "Date,brand,date", stats: "ftd,clicks", brandId: 4, limit: "25" });
    expect(notes).toEqual([]);
    expect(state.fields).toEqual(["date", "brand"]);
    expect(state.stats).toEqual(["firstTimeDeposit", "clicks"]);
    expect(state.filters).toEqual({ brandId: 4 });
    expect(state.limit).toBe(25);
    // A `+` that came unencoded is a space by the time it is read, as the API also takes it.
    expect(readSearch({ sortBy: " clicks" }).state.sort).toEqual({ key: "clicks", direction: "asc" });
    expect(readSearch({ range: "custom", from: "2026-11-01T10:00 02:00" }).state.from).toBe("2026-11-01T08:00:00Z");
  });

  it("drops bad values with a note each, and keeps the rest", () => {
    const { state, notes } = readSearch({
      fields: "date,colour",
      stats: "clicks,revenue",
      range: "fortnight",
      from: "2026-02-31",
      to: "2026-03-05",
      brandId: "abc",
      programId: 0,
      sortBy: "signups",
      offset: -5,
      limit: 5000,
      chart: "signups",
      other: "ignored",
    });
    expect(state.fields).toEqual(["date"]);
    expect(state.stats).toEqual(["clicks"]);
    // The range left out, the valid end still says a custom range was meant.
    expect(state.range).toBe("custom");
    expect(state.from).toBeUndefined();
    expect(state.to).toBe("2026-03-05");
    expect(state.filters).toEqual({});
    expect(state.sort).toBeUndefined();
    expect(state.offset).toBe(0);
    expect(state.limit).toBe(100);
    expect(state.chart).toBeUndefined();
    expect(notes).toHaveLength(10);
    expect(notes.join("\n")).toContain("'colour'");
    expect(notes.join("\n")).toContain("'2026-02-31'");
    expect(notes.join("\n")).toContain("'fortnight'");
    // Values the router parsed as objects are shown, not thrown on.
    expect(readSearch({ fields: { a: 1 }, limit: [1] }).notes).toHaveLength(2);
    // The router keeps only this page's params, as strings or numbers, for the page to judge.
    expect(validateReportSearch({ fields: "date,colour", limit: 5000, other: "x", stats: ["clicks"] })).toEqual({
      fields: "date,colour",
      limit: 5000,
      stats: '["clicks"]',
    });
  });

  it("keeps a custom range the API will judge (from after to) for the API's message", () => {
    const { state, notes } = readSearch({ range: "custom", from: "2026-11-05", to: "2026-11-01" });
    expect(notes).toEqual([]);
    expect(state).toMatchObject({ range: "custom", from: "2026-11-05", to: "2026-11-01" });
    expect(readBound("2026-11-01T25:00Z")).toBeUndefined();
    expect(readBound("0000-12-31")).toBeUndefined();
  });

  it("asks the API for totals with the same window, stats and filters but no breakdown", () => {
    const now = { now: Date.parse("2026-11-26T09:00:00Z"), zone: "UTC" };
    const state: ReportState = {
      ...defaultState(),
      fields: ["date", "brand"],
      stats: ["clicks", "signups"],
      range: "7d",
      filters: { programId: 2 },
      sort: { key: "signups", direction: "desc" },
      offset: 100,
    };
    expect(rowsQuery(state, now)).toEqual({
      fields: "date,brand",
      stats: "clicks,signups",
      conversionDateFrom: "2026-11-20",
      conversionDateTo: "2026-11-26",
      programId: 2,
      sortBy: "signups",
      offset: 100,
      limit: 100,
      timeZone: "UTC",
    });
    expect(totalsQuery(state, now)).toEqual({
      stats: "clicks,signups",
      conversionDateFrom: "2026-11-20",
      conversionDateTo: "2026-11-26",
      programId: 2,
      timeZone: "UTC",
    });
    expect(chartQuery(state, now, "date", "signups")).toMatchObject({
      fields: "date",
      stats: "signups",
      sortBy: "date",
    });
    expect(totalsQuery({ ...state, range: "yesterday" }, now)).toMatchObject({
      conversionDateFrom: "2026-11-25",
      conversionDateTo: "2026-11-25",
    });
  });

  it("forgets a sort or chart stat whose column is taken away, and goes back to the first page", () => {
    const state: ReportState = {
      ...defaultState(),
      fields: ["date", "brand"],
      stats: ["clicks", "signups"],
      sort: { key: "brand", direction: "asc" },
      chart: "signups",
      offset: 300,
    };
    const next = withColumns(state, ["date"], ["clicks"]);
    expect(next.sort).toBeUndefined();
    expect(next.chart).toBeUndefined();
    expect(next.offset).toBe(0);
    expect(withColumns(state, ["brand"], ["signups"]).sort).toEqual(state.sort);
  });
});

describe("reports: CSV", () => {
  it("quotes what needs quoting and doubles quotes", () => {
    expect(csvCell("plain")).toBe("plain");
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell("two\nlines")).toBe('"two\nlines"');
    expect(csvCell("cr\rhere")).toBe('"cr\rhere"');
    expect(csvCell(null)).toBe("");
    expect(csvCell(undefined)).toBe("");
  });

  it("neutralises text a spreadsheet would run as a formula, but not numbers", () => {
    expect(csvCell('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    expect(csvCell("+1 casino")).toBe("'+1 casino");
    expect(csvCell("-sale")).toBe("'-sale");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell("\tcmd")).toBe('"\'\tcmd"');
    expect(csvCell(-12.5)).toBe("-12.5");
    expect(csvCell(0.1234)).toBe("0.1234");
    expect(csvCell(Number.NaN)).toBe("");
  });

  it("quotes a field holding a separator of any locale: comma, semicolon, tab", () => {
    expect(csvCell("a;b")).toBe('"a;b"');
    expect(csvCell("a\tb")).toBe('"a\tb"');
    expect(csvCell("a,b;c\td")).toBe('"a,b;c\td"');
  });

  it("neutralises a formula start wherever a reader of any locale may begin a cell", () => {
    // Where `;` separates, an unquoted `x;=1+2` was two cells, the second a formula.
    expect(csvCell("x;=1+2")).toBe('"x;\'=1+2"');
    expect(csvCell('x;"=1+2"')).toBe('"x;""\'=1+2"""');
    expect(csvCell("x, @cmd")).toBe('"x, \'@cmd"');
    expect(csvCell("line\n+1")).toBe('"line\n\'+1"');
    for (const start of ["=", "+", "-", "@", "\t", "\r", "\uFF1D", "\uFF0B", "\uFF0D", "\uFF20"]) {
      const cell = csvCell(`${start}1+2`);
      expect(cell.replace(/^"/, "").startsWith(`'${start}`), JSON.stringify(cell)).toBe(true);
    }
    // Text with a formula character elsewhere stays as it is.
    expect(csvCell("1+2=3")).toBe("1+2=3");
    expect(csvCell("a-b@c")).toBe("a-b@c");
  });

  it("no cell of the file starts a formula, read with the separator of any locale", () => {
    const values = ["ok", "=1+2", "x;=1+2", 'x;"=cmd', "x,-2", "a\t@SUM(A1)", "\uFF1D1", "-sale", "a;b,c\td"];
    const csv = buildCsv(["a", "b", "c"], [values.slice(0, 3), values.slice(3, 6), [...values.slice(6), -3]]);
    expect(csv.split("\r\n")[1]).toBe("ok,'=1+2,\"x;'=1+2\"");
    for (const separator of [",", ";", "\t"]) {
      for (const line of csv.slice(1).split("\r\n")) {
        // A number (a negative amount) is no formula.
        for (const cell of readLine(line, separator).filter((c) => !/^-?\d+(\.\d+)?$/.test(c))) {
          expect(cell.replace(/^[ "]*/, ""), `${JSON.stringify(separator)}: ${line}`).not.toMatch(
            /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/,
          );
        }
      }
    }
  });

  it("writes a header and rows, CRLF-ended, after a byte order mark", () => {
    const csv = buildCsv(
      ["brand", "clicks"],
      [
        ["Lucky, Star", 10],
        ["=cmd", -3],
      ],
    );
    expect(csv).toBe('\uFEFFbrand,clicks\r\n"Lucky, Star",10\r\n\'=cmd,-3\r\n');
  });
});

/** A spreadsheet's reading of one line: cut at `separator`; a quote opens a cell only at its start. */
function readLine(line: string, separator: string): string[] {
  const cells: string[] = [];
  let at = 0;
  while (at <= line.length) {
    if (line[at] === '"') {
      let cell = "";
      let i = at + 1;
      for (; i < line.length; i++) {
        if (line[i] === '"' && line[i + 1] === '"') {
          cell += '"';
          i++;
        } else if (line[i] === '"') break;
        else cell += line[i];
      }
      const next = line.indexOf(separator, i + 1);
      cells.push(cell + line.slice(i + 1, next < 0 ? line.length : next));
      at = next < 0 ? line.length + 1 : next + 1;
    } else {
      const next = line.indexOf(separator, at);
      cells.push(line.slice(at, next < 0 ? line.length : next));
      at = next < 0 ? line.length + 1 : next + 1;
    }
  }
  return cells;
}

describe("the chart's series", () => {
  const options = {
    time: "date" as const,
    stat: "clicks" as const,
    statLabel: "Clicks",
    label: (v: unknown) => String(v),
    name: (v: unknown) => String(v),
  };

  it("splits by the first breakdown that is not a time one", () => {
    expect(splitFieldOf(["date", "trafficSource", "brand"])).toBe("trafficSource");
    expect(splitFieldOf(["hour"])).toBeUndefined();
  });

  it("draws one series without a split, summed per period in the rows' order", () => {
    const rows = [
      { date: "2026-11-01", clicks: 3 },
      { date: "2026-11-02", clicks: 5 },
    ];
    expect(chartData(rows, { ...options, split: undefined })).toEqual({
      periods: ["2026-11-01", "2026-11-02"],
      series: [{ name: "Clicks", id: null, values: [3, 5] }],
    });
  });

  it("keeps the ten largest values over the window and sums the rest into Other", () => {
    const rows = [];
    for (let source = 1; source <= 13; source++) {
      rows.push({ date: "2026-11-01", trafficSource: `S${source}`, trafficSourceId: source, clicks: source });
      rows.push({ date: "2026-11-02", trafficSource: `S${source}`, trafficSourceId: source, clicks: 1 });
    }
    const { periods, series } = chartData(rows, { ...options, split: "trafficSource" });
    expect(periods).toEqual(["2026-11-01", "2026-11-02"]);
    expect(series).toHaveLength(TOP_SERIES + 1);
    expect(series[0]).toEqual({ name: "S13", id: 13, values: [13, 1] });
    expect(series.at(-1)).toEqual({ name: "Other (3)", id: null, values: [1 + 2 + 3, 3] });
    // Every click is in some series.
    const sum = series.flatMap((s) => s.values).reduce((a, b) => a + b, 0);
    expect(sum).toBe(rows.reduce((a, r) => a + r.clicks, 0));
  });

  it("narrows to a series' value: its filter set, its breakdown left out", () => {
    const state = { ...defaultState(), fields: ["date", "trafficSource"] } as ReportState;
    const next = narrowTo(state, "trafficSource", 7);
    expect(next?.fields).toEqual(["date"]);
    expect(next?.filters.trafficSourceId).toBe(7);
    expect(narrowTo(state, "country", 1)).toBeUndefined();
  });
});

describe("the comparison with the previous period", () => {
  const at = { now: Date.parse("2026-11-20T12:00:00Z"), zone: "UTC" };

  it("is in the address as compare=previous, and a wrong value is named", () => {
    const { state } = readSearch({ compare: "previous" });
    expect(state.compare).toBe("previous");
    expect(writeSearch(state).compare).toBe("previous");
    const { state: none, notes } = readSearch({ compare: "year" });
    expect(none.compare).toBeUndefined();
    expect(notes.join(" ")).toContain("compare");
  });

  it("is the same number of whole days just before the window; none for a window with times", () => {
    const week = { ...defaultState(), range: "custom" as const, from: "2026-11-10", to: "2026-11-16" };
    expect(comparisonWindow(week, at)).toEqual({ from: "2026-11-03", to: "2026-11-09" });
    const timed = { ...week, from: "2026-11-10T08:00" };
    expect(comparisonWindow(timed, at)).toBeUndefined();
    const query = comparisonRowsQuery({ ...week, fields: ["brand"], offset: 50 }, at, {
      from: "2026-11-03",
      to: "2026-11-09",
    });
    expect(query).toMatchObject({ conversionDateFrom: "2026-11-03", conversionDateTo: "2026-11-09", offset: 0 });
  });

  it("matches rows by their breakdown values, catalog entries by id; never rows of a time breakdown", () => {
    const before = [
      { brand: "Nova", brandId: 1, country: "DE", clicks: 4 },
      { brand: "Nova renamed", brandId: 2, country: null, clicks: 9 },
    ];
    const found = byKey(["brand", "country"], before);
    expect(found.get(rowKey(["brand", "country"], { brand: "Other name", brandId: 1, country: "DE" }))?.clicks).toBe(4);
    expect(found.get(rowKey(["brand", "country"], { brand: "x", brandId: 2, country: null }))?.clicks).toBe(9);
    expect(rowsComparable(["brand"])).toBe(true);
    expect(rowsComparable(["date", "brand"])).toBe(false);
    expect(rowsComparable([])).toBe(false);
  });
});

describe("a report row's clicks", () => {
  const at = { now: Date.parse("2026-11-20T12:00:00Z"), zone: "UTC" };
  it("narrows the click log to the row's entries over the report's days, at most the last 31", () => {
    const state = {
      ...defaultState(),
      range: "custom" as const,
      from: "2026-08-01",
      to: "2026-11-20",
      filters: { linkId: 4 },
    };
    expect(clicksSearch(state, at, { trafficSourceId: 7, trafficSource: "Meta", country: "DE" })).toEqual({
      from: "2026-10-21",
      to: "2026-11-20",
      link: 4,
      source: 7,
      country: "DE",
    });
    expect(clicksSearch(state, at, { date: "2026-11-02" })).toEqual({ from: "2026-11-02", to: "2026-11-02", link: 4 });
  });
});
