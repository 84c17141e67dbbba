import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getRouteApi, useNavigate } from "@tanstack/react-router";
import { lazy, Suspense, useMemo, useState } from "react";
import { useReportZone } from "../../account-time-zone";
import { ApiFailure } from "../../api/client";
import { CopyButton } from "../../components/CopyButton";
import { CurrencyPicker, UnconvertedNotice } from "../../components/Currency";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { Pager } from "../../components/Pager";
import { Empty, ErrorState, Loading } from "../../components/states";
import { TimeZonePicker } from "../../components/TimeZonePicker";
import { saveFile } from "../../csv";
import { currencyName, formatInteger } from "../../format";
import { ColumnControls } from "./ColumnControls";
import { chartData, splitFieldOf } from "./chart-series";
import { clicksSearch } from "./clicks-link";
import { byKey, comparisonWindow, rowKey, rowsComparable } from "./comparison";
import { drillFilter, drillInto, narrowTo } from "./drill";
import { FilterControls } from "./FilterControls";
import type { ReportRow } from "./fetch-report";
import { fieldInSentence, formatField, formatHour, formatStat, isAmount, STAT_LABELS } from "./labels";
import {
  previousRowsQuery,
  previousTotalsQuery,
  reportChartQuery,
  reportRowsQuery,
  reportTotalsQuery,
} from "./queries";
import { describeWindow, RangeControls } from "./RangeControls";
import { ReportTable } from "./ReportTable";
import { reportCsv } from "./report-csv";
import {
  FILTERS,
  MAX_LIMIT,
  type ReportState,
  readSearch,
  shownStats,
  timeField,
  validateReportSearch,
  windowQuery,
  writeSearch,
} from "./report-state";
import { SavedReports } from "./SavedReports";
import "./reports.css";

// The page reaches its route by id: its routes module imports it, never the other way.
const reportsRoute = getRouteApi("/app/reports");

// ECharts is the largest dependency: it loads only when a time breakdown asks for the chart.
const ReportChart = lazy(() => import("./ReportChart"));

const PAGE_SIZES = [25, 50, 100, 250, 500, MAX_LIMIT];

/** Every parameter a control of this page sets: the API's messages for them show beside it. */
const CONTROLLED = [
  "fields",
  "stats",
  "conversionDateFrom",
  "conversionDateTo",
  "sortBy",
  "limit",
  "offset",
  "currency",
  "timeZone",
  ...FILTERS,
] as const;

/** An hour as the chart's axis has room for: "2026-11-01 10:00 (+01:00)" is "11-01 10:00". */
const shortHour = (label: string) => label.slice(5, 16);

/** The API's validation message for one parameter, from whichever of the page's requests was refused. */
const messageFor = (errors: unknown[], name: string) => errors.map((e) => fieldError(e, name)).find(Boolean);

export function ReportsPage() {
  const search = reportsRoute.useSearch();
  const navigate = useNavigate({ from: "/reports" });
  // Values left out of the address are named, not silently lost.
  const { state, notes } = useMemo(() => readSearch(search), [search]);
  const go = (next: ReportState) => void navigate({ search: writeSearch(next) });
  // The reports drilled out of, newest last: "Back" returns to the wider one (so does the browser's Back).
  const [wider, setWider] = useState<ReportState[]>([]);
  const narrow = (next: ReportState | undefined) => {
    if (!next) return;
    setWider([...wider, state]);
    go(next);
  };
  const drill = (row: Record<string, unknown>) => narrow(drillInto(state, row));
  const back = () => {
    const previous = wider.at(-1);
    if (!previous) return;
    setWider(wider.slice(0, -1));
    go(previous);
  };
  const saved = Object.fromEntries(Object.entries(writeSearch(state)).map(([key, value]) => [key, String(value)]));
  const withCurrency = (currency: string | undefined): ReportState => {
    const { currency: _currency, ...rest } = state;
    return currency ? { ...rest, currency } : rest;
  };
  const withZone = (timeZone: string | undefined): ReportState => {
    const { timeZone: _zone, ...rest } = state;
    return { ...(timeZone ? { ...rest, timeZone } : rest), offset: 0 };
  };

  // The zone chosen, else the account's: the queries wait until it is known.
  const { zone, accountZone, ready: zoneKnown } = useReportZone(state.timeZone);
  // Presets are whole days of that zone up to today there: the day is read once per render, as the queries' key.
  const at = { now: Date.now(), zone };
  const stats = shownStats(state);
  const fields = state.fields;
  const table = useQuery({
    ...reportRowsQuery(state, at),
    enabled: zoneKnown,
    placeholderData: keepPreviousData,
  });
  const totals = useQuery({
    ...reportTotalsQuery(state, at),
    // Without breakdowns the table's one row is the total already.
    enabled: zoneKnown && fields.length > 0,
    placeholderData: keepPreviousData,
  });
  // The previous period of the same length, when asked for and the window is whole days.
  const compareWindow = state.compare ? comparisonWindow(state, at) : undefined;
  const comparable = rowsComparable(fields);
  const previousRows = useQuery({
    ...previousRowsQuery(state, at, compareWindow),
    enabled: zoneKnown && compareWindow !== undefined && comparable,
    placeholderData: keepPreviousData,
  });
  const previousTotals = useQuery({
    ...previousTotalsQuery(state, at, compareWindow),
    enabled: zoneKnown && compareWindow !== undefined,
    placeholderData: keepPreviousData,
  });
  const previousByKey = previousRows.data && comparable ? byKey(fields, previousRows.data.rows) : undefined;
  const previousTotal = compareWindow ? previousTotals.data?.rows[0] : undefined;
  const previousOf =
    compareWindow === undefined
      ? undefined
      : fields.length === 0
        ? () => previousTotal ?? null
        : previousByKey
          ? (row: ReportRow) => previousByKey.get(rowKey(fields, row)) ?? null
          : undefined;
  const time = timeField(state);
  const chartStat = state.chart ?? stats[0] ?? "clicks";
  const split = splitFieldOf(fields);
  const chart = useQuery({
    ...reportChartQuery(state, at, time, chartStat, split),
    enabled: zoneKnown && time !== undefined,
  });

  const chartOf = (rows: ReportRow[]) =>
    chartData(rows, {
      time: time ?? "date",
      split,
      stat: chartStat,
      statLabel: STAT_LABELS[chartStat],
      // An hour with its offset: on the night clocks go back, 01:00 comes twice.
      label: (period) => (time === "hour" ? formatHour(String(period)) : String(period)),
      name: (value) => (split ? formatField(split, value) : String(value)),
    });

  const drawn = chart.data ? chartOf(chart.data.rows) : undefined;

  const errors = [table.error, totals.error, chart.error, previousRows.error, previousTotals.error].filter(Boolean);
  const errorOf = (name: string) => messageFor(errors, name);
  const unclaimed = errors.map((e) => formError(e, CONTROLLED)).find(Boolean);
  const refusedByField = table.error instanceof ApiFailure && table.error.fieldErrors.length > 0;

  const rows = table.data?.rows ?? [];
  const total = fields.length > 0 ? totals.data?.rows[0] : undefined;
  // What the amounts are in (the answer says), and what it left out: near the totals.
  const currency = table.data?.meta.currency;
  const shownZone = table.data?.meta.timeZone;
  const totalsMeta = fields.length > 0 ? totals.data?.meta : table.data?.meta;
  const ready = !table.isFetching && !table.isError && (fields.length === 0 || (!totals.isFetching && !totals.isError));

  function download() {
    const { conversionDateFrom, conversionDateTo } = windowQuery(state, at);
    const span = [conversionDateFrom, conversionDateTo].filter(Boolean).join("_to_").replace(/:/g, "");
    const name = `performance-report${span ? `-${span}` : ""}${currency ? `-${currency}` : ""}.csv`;
    const comparison = previousOf ? { previousOf, totals: previousTotal } : undefined;
    saveFile(name, reportCsv(fields, stats, rows, total, comparison), "text/csv");
  }

  return (
    <>
      <div className="page-head">
        <h1>Reports</h1>
        <p className="actions">
          <CopyButton value={window.location.href} label="Copy link" />
          <button type="button" className="button secondary" onClick={download} disabled={!ready || rows.length === 0}>
            Download CSV
          </button>
        </p>
      </div>
      <p className="muted">
        The performance report: clicks by click time and conversions by conversion time, exact to the instant.
        Everything chosen here is in the address, so the link shows the same report.
      </p>
      {notes.length > 0 && (
        <div className="notice warning report-notes" role="status">
          <p>Some values in the address were not valid and were left out:</p>
          <ul>
            {notes.map((note) => (
              <li key={note}>{note}</li>
            ))}
          </ul>
        </div>
      )}

      <SavedReports
        kind="performance"
        current={saved}
        onOpen={(params) => {
          setWider([]);
          void navigate({ search: validateReportSearch(params) });
        }}
      />

      <section className="panel report-builder" aria-labelledby="builder-title">
        <h2 id="builder-title">Report</h2>
        <RangeControls
          state={state}
          at={at}
          onChange={go}
          errors={{ from: errorOf("conversionDateFrom"), to: errorOf("conversionDateTo") }}
        >
          <TimeZonePicker
            value={state.timeZone}
            accountZone={accountZone}
            onChange={(next) => go(withZone(next))}
            error={errorOf("timeZone")}
          />
          <CurrencyPicker
            value={state.currency}
            shown={currency}
            onChange={(next) => go(withCurrency(next))}
            error={errorOf("currency")}
          />
        </RangeControls>
        <div className="report-compare">
          <label>
            <input
              type="checkbox"
              checked={state.compare === "previous"}
              onChange={(e) => {
                const { compare: _compare, ...rest } = state;
                go(e.target.checked ? { ...rest, compare: "previous" } : rest);
              }}
            />{" "}
            Show changes against the same number of days before
          </label>
          {state.compare && (
            <p className="muted small" data-testid="comparison-window">
              {compareWindow
                ? `Each figure beside ${compareWindow.from === compareWindow.to ? compareWindow.from : `${compareWindow.from} to ${compareWindow.to}`}, the same number of days just before${comparable || fields.length === 0 ? "" : "; rows by day, week, month or hour are not in both periods, so only the totals are compared"}.`
                : "A comparison needs a window of whole days (a preset, or dates without times)."}
            </p>
          )}
        </div>
        <ColumnControls state={state} onChange={go} errors={{ fields: errorOf("fields"), stats: errorOf("stats") }} />
        <h3>Filters</h3>
        <FilterControls state={state} onChange={go} errorOf={errorOf} />
        <FormError message={unclaimed} />
      </section>

      <p className="report-window">
        <strong>Window:</strong> {describeWindow(state, at)}
        {shownZone && (
          <>
            <br />
            <strong>Time zone:</strong> {shownZone} (days, weeks, months and hours are local there).
          </>
        )}
        {currency && (
          <>
            <br />
            <strong>Amounts in:</strong> {currencyName(currency)} ({currency}), each converted at the rate of its day.
          </>
        )}
      </p>

      {time && (
        <section className="panel report-chart" aria-labelledby="chart-title">
          <div className="report-chart-head">
            <h2 id="chart-title">
              {STAT_LABELS[chartStat]}
              {isAmount(chartStat) && chart.data ? ` (${chart.data.meta.currency})` : ""} per {fieldInSentence(time)}
            </h2>
            <Field label="Chart" inline>
              {(props) => (
                <select
                  {...props}
                  value={chartStat}
                  onChange={(e) => go({ ...state, chart: e.target.value as typeof chartStat })}
                >
                  {stats.map((stat) => (
                    <option key={stat} value={stat}>
                      {STAT_LABELS[stat]}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          {chart.isPending ? (
            <Loading label="Loading the chart…" />
          ) : chart.isError ? (
            refusedByField ? null : (
              <ErrorState error={chart.error} onRetry={() => void chart.refetch()} />
            )
          ) : chart.data.rows.length === 0 ? (
            <Empty>Nothing to chart in this window.</Empty>
          ) : (
            <Suspense fallback={<Loading label="Loading the chart…" />}>
              <ReportChart
                data={drawn ?? { periods: [], series: [] }}
                onPick={(index) => {
                  const id = drawn?.series[index]?.id;
                  if (split && id != null) narrow(narrowTo(state, split, id));
                }}
                statLabel={STAT_LABELS[chartStat]}
                periodLabel={fieldInSentence(time).replace(" (Monday)", "")}
                format={(value) => formatStat(chartStat, value, chart.data.meta.currency)}
                {...(time === "hour" ? { axisLabel: shortHour } : {})}
              />
              {split && drawn?.series.some((s) => s.id !== null) && (
                // What a click on a bar does, for the keyboard and for screen readers too.
                <ul className="chart-narrow" aria-label={`Narrow the report to one ${fieldInSentence(split)}`}>
                  {drawn.series.map((s) =>
                    s.id === null ? null : (
                      <li key={s.id}>
                        <button
                          type="button"
                          className="link-button"
                          onClick={() => narrow(narrowTo(state, split, s.id ?? 0))}
                        >
                          {s.name}
                        </button>
                      </li>
                    ),
                  )}
                </ul>
              )}
              {chart.data.pagination.total > chart.data.rows.length && (
                <p className="muted small">
                  The chart draws the first {formatInteger(chart.data.rows.length)} of{" "}
                  {formatInteger(chart.data.pagination.total)} {split ? "bar parts" : "bars"}: a shorter window shows
                  them all.
                </p>
              )}
            </Suspense>
          )}
        </section>
      )}

      <section className="report-results" aria-labelledby="results-title" aria-busy={!ready && !table.isError}>
        <div className="report-results-head">
          <h2 id="results-title">Rows</h2>
          {wider.length > 0 && (
            <button type="button" className="button secondary" onClick={back}>
              Back to the wider report
            </button>
          )}
          {errorOf("sortBy") && (
            <p className="field-error" role="alert">
              Sort: {errorOf("sortBy")}
            </p>
          )}
          <Field label="Rows per page" inline error={errorOf("limit")}>
            {(props) => (
              <select
                {...props}
                value={state.limit}
                onChange={(e) => go({ ...state, limit: Number(e.target.value), offset: 0 })}
              >
                {[...new Set([...PAGE_SIZES, state.limit])]
                  .sort((a, b) => a - b)
                  .map((size) => (
                    <option key={size} value={size}>
                      {size}
                    </option>
                  ))}
              </select>
            )}
          </Field>
        </div>
        {table.isPending ? (
          <Loading label="Loading the report…" />
        ) : table.isError ? (
          refusedByField ? (
            <p className="notice error">The report was refused: the message is beside the setting it concerns.</p>
          ) : (
            <ErrorState error={table.error} onRetry={() => void table.refetch()} />
          )
        ) : (
          <>
            {table.isFetching && <Loading label="Updating…" />}
            {totals.isError && !refusedByField && (
              <ErrorState error={totals.error} onRetry={() => void totals.refetch()} />
            )}
            <UnconvertedNotice meta={totalsMeta} />
            <ReportTable
              fields={fields}
              stats={stats}
              rows={rows}
              totals={total}
              sort={state.sort}
              onSort={(sort) => go({ ...state, sort, offset: 0 })}
              currency={table.data.meta.currency}
              totalsCurrency={totals.data?.meta.currency}
              onDrill={drill}
              canDrill={(row) => drillFilter(state, row) !== undefined}
              previousOf={previousOf}
              previousTotals={fields.length > 0 ? previousTotal : undefined}
              clicksOf={(row) => clicksSearch(state, at, row)}
            />
            {table.data.pagination && (
              <Pager page={table.data.pagination} onOffset={(offset) => go({ ...state, offset })} label="Report rows" />
            )}
          </>
        )}
      </section>
    </>
  );
}
