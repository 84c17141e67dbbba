import { describe, expect, it } from "vitest";
import { COMMON_CURRENCIES, currencyChoices } from "../web/src/currency.js";
import { currencyName, formatMoney } from "../web/src/format.js";
import { metricColumns } from "../web/src/pages/composites/metrics.js";
import { compositeQuery, parseCompositeSearch, periodSearch } from "../web/src/pages/composites/search.js";
import { formatStat } from "../web/src/pages/reports/labels.js";
import {
  defaultState,
  readSearch,
  rowsQuery,
  totalsQuery,
  validateReportSearch,
  writeSearch,
} from "../web/src/pages/reports/report-state.js";
import { currencyParam } from "../web/src/search-params.js";

// Money on the dashboard: one formatter for every amount, the currency in each page's address,
// and the currency parameter the reports are asked with.

const NOW = Date.parse("2026-11-26T15:00:00Z");
const AT = { now: NOW, zone: "UTC" };

describe("formatMoney", () => {
  it("shows an amount in its currency, with the currency's own decimals", () => {
    expect(formatMoney(1234.5, "USD")).toBe("$1,234.50");
    expect(formatMoney(1234.5, "eur")).toBe("€1,234.50");
    expect(formatMoney(1234.5, "GBP")).toBe("£1,234.50");
    expect(formatMoney(1234.5, "JPY")).toBe("¥1,235");
    expect(formatMoney(-3, "USD")).toBe("-$3.00");
    // Every code the picker offers reads with its code or its own symbol, never a bare figure.
    for (const code of COMMON_CURRENCIES) expect(formatMoney(1, code)).not.toMatch(/^[\d.,]+$/);
  });

  it("keeps up to 4 decimals when precise, as the API rounds", () => {
    expect(formatMoney(0.0123, "USD", { precise: true })).toBe("$0.0123");
    expect(formatMoney(2, "USD", { precise: true })).toBe("$2.00");
    expect(formatMoney(0.12345, "JPY", { precise: true })).toBe("¥0.1235");
  });

  it("puts the code after the figure where many currencies share a column", () => {
    expect(formatMoney(100, "GBP", { code: true })).toBe("100.00 GBP");
    expect(formatMoney(25.5, "eur", { code: true, precise: true })).toBe("25.50 EUR");
    expect(formatMoney(10000, "JPY", { code: true })).toBe("10,000 JPY");
  });

  it("still shows a figure for a code Intl cannot read, or none", () => {
    expect(formatMoney(5, "EURO")).toBe("5.00 EURO");
    expect(formatMoney(5, "", { code: true })).toBe("5.00");
  });

  it("names currencies", () => {
    expect(currencyName("usd")).toBe("US Dollar");
    expect(currencyName("nope")).toBe("nope");
  });
});

describe("the currencies offered", () => {
  it("are the common ones and the tenant's, once each, A to Z", () => {
    expect(COMMON_CURRENCIES).toEqual(
      expect.arrayContaining(["EUR", "USD", "GBP", "JPY", "CHF", "SEK", "PLN", "BRL", "INR", "ZAR", "TRY", "NZD"]),
    );
    const choices = currencyChoices("isk", undefined, "USD", "");
    expect(choices).toContain("ISK");
    expect(new Set(choices).size).toBe(choices.length);
    expect(choices).toEqual([...choices].sort());
  });

  it("are read from an address as three letters, upper-cased", () => {
    expect(currencyParam("eur")).toBe("EUR");
    expect(currencyParam(" Gbp ")).toBe("GBP");
    for (const bad of ["EURO", "E1R", "", 978, null, undefined]) expect(currencyParam(bad)).toBeUndefined();
  });
});

describe("reports: the currency in the address", () => {
  it("is read, written back and sent as the currency parameter", () => {
    const { state, notes } = readSearch({ fields: "date", currency: "gbp" });
    expect(notes).toEqual([]);
    expect(state.currency).toBe("GBP");
    expect(writeSearch(state)).toEqual({ fields: "date", currency: "GBP" });
    expect(validateReportSearch({ currency: "GBP", other: "x" })).toEqual({ currency: "GBP" });
    expect(rowsQuery(state, AT).currency).toBe("GBP");
    expect(totalsQuery(state, AT).currency).toBe("GBP");
  });

  it("is left out when it is none, and named when it is not a code", () => {
    expect(rowsQuery(defaultState(), AT)).not.toHaveProperty("currency");
    expect(writeSearch(defaultState())).not.toHaveProperty("currency");
    const { state, notes } = readSearch({ currency: "euros" });
    expect(state.currency).toBeUndefined();
    expect(notes).toEqual([
      "currency 'euros' is not a currency code (three letters, ISO 4217): the reporting currency shown.",
    ]);
  });

  it("formats amounts in the answer's currency, and counts and rates as before", () => {
    expect(formatStat("commission", 12.5, "EUR")).toBe("€12.50");
    expect(formatStat("epc", 0.0123, "USD")).toBe("$0.0123");
    expect(formatStat("clicks", 1234, "EUR")).toBe("1,234");
    expect(formatStat("conversionRate", 0.1234, "EUR")).toBe("12.34%");
  });
});

describe("accounts and links: the currency in the address", () => {
  it("is kept, sent, and carried to an account's links", () => {
    const search = parseCompositeSearch({ currency: "chf", from: "2026-11-01", to: "2026-11-10", q: "x" });
    expect(search.currency).toBe("CHF");
    expect(compositeQuery(search, "UTC", NOW).currency).toBe("CHF");
    expect(periodSearch(search)).toEqual({ currency: "CHF", from: "2026-11-01", to: "2026-11-10" });
    expect(compositeQuery(parseCompositeSearch({ currency: "francs" }), "UTC", NOW)).not.toHaveProperty("currency");
  });

  it("shows the money metrics in it", () => {
    const columns = metricColumns("cpaCommission");
    const commission = columns.find((c) => c.name === "commission");
    const clicks = columns.find((c) => c.name === "clicks");
    expect(commission?.format(1234.5, "GBP")).toBe("£1,234.50");
    expect(clicks?.format(1234.5, "GBP")).toBe("1,235");
  });
});
