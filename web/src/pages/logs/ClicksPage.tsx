import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import type { FormEvent } from "react";
import { useAccountTimeZone } from "../../account-time-zone";
import type { Column } from "../../components/DataTable";
import { Field, fieldError, formError } from "../../components/Field";
import { HistoryList } from "../../components/HistoryList";
import { useUrlForm } from "../../components/useUrlForm";
import { formatDateTime } from "../../format";
import { compact, withOffset } from "../../search-params";
import { clicksQuery } from "./queries";
import { botReasonLabel, type ClickLogSearch, DEVICES, type Device } from "./search";
import "./logs.css";

const route = getRouteApi("/app/clicks");

type Click = Awaited<ReturnType<ReturnType<typeof clicksQuery>["queryFn"]>>["data"][number];

const dash = (value: string | null) => value ?? "—";

const COLUMNS: Column<Click>[] = [
  { key: "at", label: "Time", cell: (c) => formatDateTime(c.at) },
  {
    key: "id",
    label: "Click",
    cell: (c) => (
      <Link to="/clicks/$clickId" params={{ clickId: c.id }} className="mono">
        {c.id}
      </Link>
    ),
  },
  { key: "country", label: "Country", cell: (c) => dash(c.country) },
  { key: "device", label: "Device", cell: (c) => dash(c.device) },
  { key: "os", label: "OS", cell: (c) => dash(c.os) },
  { key: "browser", label: "Browser", cell: (c) => dash(c.browser) },
  {
    key: "bot",
    label: "Made by",
    cell: (c) => (c.bot ? <span className="badge warning">{botReasonLabel(c.botReason)}</span> : "Person"),
  },
  { key: "parameterA", label: "Sub-id A", cell: (c) => dash(c.parameterA) },
  { key: "parameterB", label: "Sub-id B", cell: (c) => dash(c.parameterB) },
  { key: "source", label: "Source", numeric: true, cell: (c) => `#${c.trafficSourceId}` },
  { key: "link", label: "Link", numeric: true, cell: (c) => `#${c.linkId}` },
];

/** The click log: every click with its facts, bots included, newest first (GET /api/v1/clicks). */
export function ClicksPage() {
  const search = route.useSearch();
  const navigate = useNavigate();
  const go = (next: ClickLogSearch) => void navigate({ to: "/clicks", search: next });
  const account = useAccountTimeZone();
  const list = useQuery({
    ...clicksQuery(search, account.zone),
    enabled: account.settled,
    placeholderData: keepPreviousData,
  });
  const narrowed = [
    search.link ? `link #${search.link}` : null,
    search.source ? `traffic source #${search.source}` : null,
    search.tracker ? `tracker #${search.tracker}` : null,
  ].filter((x): x is string => x !== null);

  return (
    <>
      <div className="page-head">
        <h1>Clicks</h1>
      </div>
      <p className="muted">
        Every click with what the service worked out about it: country, device, bots. Bots' clicks are listed here and
        left out of the reports' clicks. Days are in {account.zone ?? "the account's time zone"}; without dates, the
        last 7 days; at most 31 days at once.
      </p>
      {narrowed.length > 0 && (
        <p className="log-narrowed">
          Only {narrowed.join(", ")}.{" "}
          <Link
            to="/clicks"
            search={{ ...search, link: undefined, source: undefined, tracker: undefined, offset: undefined }}
          >
            Show every click
          </Link>
        </p>
      )}
      <ClickFilters search={search} error={list.error} onApply={(next) => go(next)} />
      <section aria-labelledby="clicks-title" aria-busy={list.isFetching}>
        <h2 id="clicks-title" className="visually-hidden">
          Clicks, newest first
        </h2>
        <HistoryList
          list={list}
          rowsOf={(d) => ({ rows: d.data, page: d.pagination })}
          caption="Clicks, newest first"
          columns={COLUMNS}
          rowKey={(c) => c.id}
          empty="No click matches these filters in this window."
          loading="Loading the clicks…"
          pagerLabel="Clicks"
          onOffset={(offset) => go(withOffset(search, offset))}
        />
      </section>
    </>
  );
}

interface Values {
  from: string;
  to: string;
  country: string;
  device: Device | "";
  bot: "" | "yes" | "no";
  clickId: string;
}

const FIELDS = ["dateFrom", "dateTo", "country", "device", "bot", "clickId"];

function ClickFilters({
  search,
  error,
  onApply,
}: {
  search: ClickLogSearch;
  error: unknown;
  onApply: (next: ClickLogSearch) => void;
}) {
  const fromUrl = (): Values => ({
    from: search.from ?? "",
    to: search.to ?? "",
    country: search.country ?? "",
    device: search.device ?? "",
    bot: search.bot ?? "",
    clickId: search.clickId ?? "",
  });
  const { values, set } = useUrlForm<Values>(fromUrl, JSON.stringify(search));

  function apply(event: FormEvent) {
    event.preventDefault();
    onApply(
      compact<ClickLogSearch>({
        link: search.link,
        source: search.source,
        tracker: search.tracker,
        from: values.from || undefined,
        to: values.to || undefined,
        country: values.country.trim().toUpperCase() || undefined,
        device: values.device || undefined,
        bot: values.bot || undefined,
        clickId: values.clickId.trim() || undefined,
      }),
    );
  }
  const problem = formError(error, FIELDS);
  return (
    <form className="toolbar log-filters" onSubmit={apply} noValidate aria-label="Filters">
      <Field label="From" error={fieldError(error, "dateFrom")}>
        {(props) => <input {...props} type="date" value={values.from} onChange={set("from")} />}
      </Field>
      <Field label="To" error={fieldError(error, "dateTo")}>
        {(props) => <input {...props} type="date" value={values.to} onChange={set("to")} />}
      </Field>
      <Field label="Country" error={fieldError(error, "country")}>
        {(props) => (
          <input {...props} value={values.country} onChange={set("country")} maxLength={2} placeholder="DE" size={4} />
        )}
      </Field>
      <Field label="Device" error={fieldError(error, "device")}>
        {(props) => (
          <select {...props} value={values.device} onChange={set("device")}>
            <option value="">Every device</option>
            {DEVICES.map((d) => (
              <option key={d} value={d}>
                {d[0]?.toUpperCase()}
                {d.slice(1)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Made by" error={fieldError(error, "bot")}>
        {(props) => (
          <select {...props} value={values.bot} onChange={set("bot")}>
            <option value="">People and bots</option>
            <option value="no">People only</option>
            <option value="yes">Bots only</option>
          </select>
        )}
      </Field>
      <Field label="Click id" error={fieldError(error, "clickId")}>
        {(props) => <input {...props} value={values.clickId} onChange={set("clickId")} placeholder="clk_…" />}
      </Field>
      <div className="field actions">
        <button type="submit" className="button">
          Apply
        </button>
      </div>
      {problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}
