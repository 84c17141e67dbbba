import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { type FormEvent, lazy, Suspense, useEffect, useState } from "react";
import { useReportZone } from "../account-time-zone";
import { CurrencyPicker, UnconvertedNotice } from "../components/Currency";
import { fieldError } from "../components/Field";
import { Empty, ErrorState, Loading } from "../components/states";
import { TimeZonePicker } from "../components/TimeZonePicker";
import { type DayRange, lengthInDays, previousPeriod, rangeProblem } from "../dates";
import { formatChange, formatDateTime, formatInteger, formatMoney, formatPercent } from "../format";
import { useMe } from "../me";
import { PERIOD_PRESETS, PRESET_LABELS, presetRange } from "../periods";
import type { OverviewSearch } from "../router";
import { METRIC_LABELS } from "../vocabulary";
import { openIssuesQuery } from "./issues/queries";
import { dailyQuery, overviewRange, type Stat, totalsQuery } from "./overview/queries";

// The page reaches its route by id: its routes module imports it, never the other way.
const overviewRoute = getRouteApi("/app/");

// ECharts is the largest dependency: it loads beside the figures, not before them.
const DailyChart = lazy(() => import("../components/DailyChart"));

/** Each card's figure; money in the answer's currency (`meta.currency`), named in its hint. */
const CARDS: {
  stat: Stat;
  label: string;
  hint: (currency: string) => string;
  format: (n: number, currency: string) => string;
}[] = [
  { stat: "clicks", label: METRIC_LABELS.clicks, hint: () => "bots excluded", format: formatInteger },
  { stat: "signups", label: METRIC_LABELS.signups, hint: () => "registrations", format: formatInteger },
  { stat: "firstTimeDeposit", label: METRIC_LABELS.firstTimeDeposit, hint: () => "FTDs", format: formatInteger },
  {
    stat: "commission",
    label: METRIC_LABELS.commission,
    hint: (currency) => (currency ? `commission, ${currency}` : "commission"),
    format: (n, currency) => formatMoney(n, currency),
  },
  {
    stat: "conversionRate",
    label: METRIC_LABELS.conversionRate,
    hint: () => "signups / clicks",
    format: formatPercent,
  },
];

function describeRange(range: DayRange): string {
  return range.from === range.to ? range.from : `${range.from} to ${range.to}`;
}

export function Overview() {
  const search = overviewRoute.useSearch();
  // The zone chosen, else the account's: the figures wait until it is known.
  const { zone, accountZone, ready } = useReportZone(search.tz);
  const now = Date.now();
  const range = overviewRange(search, zone, now);
  const previous = previousPeriod(range);
  const currency = search.currency;
  const current = useQuery({ ...totalsQuery(range, zone, currency), enabled: ready });
  const before = useQuery({ ...totalsQuery(previous, zone, currency), enabled: ready });
  const days = useQuery({ ...dailyQuery(range, zone), enabled: ready });

  return (
    <>
      <div className="page-head">
        <h1>Overview</h1>
        <RangePicker
          range={range}
          search={search}
          zone={zone}
          now={now}
          accountZone={accountZone}
          shown={current.data?.meta.currency}
          error={current.error}
        />
      </div>
      <p className="muted" id="period">
        {describeRange(range)} ({current.data?.meta.timeZone ?? zone}, {lengthInDays(range)} days), compared with{" "}
        {describeRange(previous)}.
      </p>

      <section aria-labelledby="figures-title">
        <h2 id="figures-title" className="visually-hidden">
          Figures
        </h2>
        <UnconvertedNotice meta={current.data?.meta} />
        {current.isError && fieldError(current.error, "timeZone") ? (
          <p className="notice error">The figures were refused: the message is beside the time zone.</p>
        ) : current.isError && fieldError(current.error, "currency") ? (
          <p className="notice error">The figures were refused: the message is beside the currency.</p>
        ) : current.isError ? (
          <ErrorState error={current.error} onRetry={() => void current.refetch()} />
        ) : (
          <ul className="cards">
            {CARDS.map((card) => {
              const value = current.data?.totals[card.stat];
              const prev = before.data?.totals[card.stat];
              // Both answers are in the currency asked for: the current one says which.
              const format = (n: number) => card.format(n, current.data?.meta.currency ?? "");
              const delta = value !== undefined && prev !== undefined ? formatChange(value, prev) : null;
              return (
                <li
                  key={card.stat}
                  className="card"
                  data-stat={card.stat}
                  data-value={value ?? ""}
                  data-previous={prev ?? ""}
                >
                  <h3 className="card-label">
                    {card.label} <span className="card-hint">{card.hint(current.data?.meta.currency ?? "")}</span>
                  </h3>
                  {value === undefined ? (
                    <p className="card-value loading" aria-busy="true">
                      …
                    </p>
                  ) : (
                    <p className={format(value).length > 8 ? "card-value long" : "card-value"}>{format(value)}</p>
                  )}
                  <p className="card-compare">
                    {prev === undefined ? (
                      before.isError ? (
                        "previous period unavailable"
                      ) : (
                        "\u00a0"
                      )
                    ) : (
                      <>
                        {delta && (
                          <>
                            <span
                              className={
                                delta.startsWith("-") ? "down" : delta.startsWith("+") || delta === "new" ? "up" : ""
                              }
                            >
                              {delta}
                            </span>{" "}
                          </>
                        )}
                        vs {format(prev)} before
                      </>
                    )}
                  </p>
                </li>
              );
            })}
          </ul>
        )}
      </section>

      <div className="panels">
        <section className="panel" aria-labelledby="daily-title">
          <h2 id="daily-title">Daily clicks and conversions</h2>
          {days.isPending ? (
            <Loading label="Loading the daily figures…" />
          ) : days.isError ? (
            <ErrorState error={days.error} onRetry={() => void days.refetch()} />
          ) : days.data.every((d) => d.clicks === 0 && d.signups === 0) ? (
            <Empty>No clicks or conversions in this period.</Empty>
          ) : (
            <Suspense fallback={<Loading label="Loading the chart…" />}>
              <DailyChart points={days.data} />
            </Suspense>
          )}
        </section>
        <OpenIssues />
      </div>
    </>
  );
}

interface RangePickerProps {
  range: DayRange;
  search: OverviewSearch;
  /** The zone whose days the presets are, the instant they count back from, and the account's zone. */
  zone: string;
  now: number;
  accountZone: string | undefined;
  /** What the figures are in (the answer's `meta.currency`). */
  shown: string | undefined;
  /** The totals' refusal, whose message for `currency` shows beside the picker. */
  error: unknown;
}

function RangePicker({ range, search, zone, now, accountZone, shown, error: refused }: RangePickerProps) {
  const navigate = useNavigate();
  // The currency and zone stay with every range chosen, as the range stays with either.
  const kept = { ...(search.currency ? { currency: search.currency } : {}), ...(search.tz ? { tz: search.tz } : {}) };
  const [from, setFrom] = useState(range.from);
  const [to, setTo] = useState(range.to);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setFrom(range.from);
    setTo(range.to);
  }, [range.from, range.to]);

  function apply(event: FormEvent) {
    event.preventDefault();
    const problem = rangeProblem(from, to, "range");
    setError(problem);
    if (problem) return;
    void navigate({ to: "/", search: { from, to, ...kept } });
  }

  return (
    <div className="range">
      <ul className="presets" aria-label="Date range presets">
        {PERIOD_PRESETS.map((name) => {
          const preset = presetRange(name, zone, now);
          const active = preset.from === range.from && preset.to === range.to;
          return (
            <li key={name}>
              <Link
                to="/"
                search={{ ...preset, ...kept }}
                className={active ? "chip active" : "chip"}
                aria-current={active ? "true" : undefined}
              >
                {PRESET_LABELS[name]}
              </Link>
            </li>
          );
        })}
      </ul>
      <form className="custom-range" onSubmit={apply} noValidate>
        <div className="field inline">
          <label htmlFor="range-from">From</label>
          <input id="range-from" type="date" value={from} max={to} onChange={(e) => setFrom(e.target.value)} />
        </div>
        <div className="field inline">
          <label htmlFor="range-to">To</label>
          <input id="range-to" type="date" value={to} min={from} onChange={(e) => setTo(e.target.value)} />
        </div>
        <button type="submit" className="button secondary">
          Apply
        </button>
        {error && (
          <p className="field-error" role="alert">
            {error}
          </p>
        )}
      </form>
      <TimeZonePicker
        inline
        value={search.tz}
        accountZone={accountZone}
        error={fieldError(refused, "timeZone")}
        onChange={(next) => {
          const { tz: _tz, ...rest } = search;
          void navigate({ to: "/", search: next ? { ...rest, tz: next } : rest });
        }}
      />
      <CurrencyPicker
        inline
        value={search.currency}
        shown={shown}
        error={fieldError(refused, "currency")}
        onChange={(next) => {
          const { currency: _currency, ...rest } = search;
          void navigate({ to: "/", search: next ? { ...rest, currency: next } : rest });
        }}
      />
    </div>
  );
}

const SEVERITY_ORDER = { critical: 0, error: 1, warning: 2 } as const;

function OpenIssues() {
  const me = useMe();
  // Issues need account.admin: a person without it is not offered the panel at all.
  const allowed = me.data?.permissions.includes("account.admin") ?? false;
  const issues = useQuery({ ...openIssuesQuery, enabled: allowed });
  if (me.isSuccess && !allowed) return null;
  return (
    <section className="panel" aria-labelledby="issues-title">
      <h2 id="issues-title">Open issues</h2>
      {me.isError ? (
        <ErrorState error={me.error} onRetry={() => void me.refetch()} />
      ) : issues.isPending ? (
        <Loading label="Loading the open issues…" />
      ) : issues.isError ? (
        <ErrorState error={issues.error} onRetry={() => void issues.refetch()} />
      ) : issues.data.data.length === 0 ? (
        <Empty>No open issues: everything is running.</Empty>
      ) : (
        <>
          <ul className="issues">
            {[...issues.data.data]
              .sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity])
              .map((issue) => (
                <li key={issue.id} className="issue">
                  <span className={`badge ${issue.severity}`}>{issue.severity}</span>
                  <div>
                    <Link to="/issues/$issueId" params={{ issueId: issue.id }}>
                      {issue.title}
                    </Link>
                    <p className="muted small">
                      {issue.subject.type.replace(/_/g, " ")} {issue.subject.name}, opened{" "}
                      {formatDateTime(issue.openedAt)}
                    </p>
                  </div>
                </li>
              ))}
          </ul>
          {(issues.data.pagination?.total ?? 0) > issues.data.data.length && (
            <p className="muted small">
              {issues.data.data.length} of {issues.data.pagination?.total} open issues shown.
            </p>
          )}
        </>
      )}
    </section>
  );
}
