import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { type FormEvent, useMemo, useState } from "react";
import { useAccountTimeZone } from "../../account-time-zone";
import { type Column, DataTable } from "../../components/DataTable";
import { Field, fieldError } from "../../components/Field";
import { Pager } from "../../components/Pager";
import { SearchPicker } from "../../components/SearchPicker";
import { ErrorState, Loading } from "../../components/states";
import { useUrlForm } from "../../components/useUrlForm";
import { saveFile } from "../../csv";
import { formatDateTime, formatInteger } from "../../format";
import { useCan } from "../../permissions";
import { catalogPicker } from "../catalog/picker-sources";
import { ConversionValue } from "./ConversionValue";
import { conversionsCsv, EXPORT_MAX_ROWS, exportConversions } from "./export-csv";
import { conversionsQuery } from "./queries";
import { StatusBadge } from "./StatusBadge";
import {
  CONVERSION_STATUSES,
  CONVERSION_TYPES,
  type ConversionFilters,
  type ConversionSearch,
  type ConversionStatus,
  type ConversionType,
  shortDateTime,
  statusLabel,
  statusList,
  typeLabel,
  withFilters,
} from "./search";
import "./conversions.css";
import { withOffset } from "../../search-params";

// The page reaches its route by id: its routes module imports it, never the other way.
const conversionsRoute = getRouteApi("/app/conversions");

type ConversionRow = {
  id: string;
  type: string;
  status: string;
  value: number | null;
  currency: string | null;
  occurredAt: string;
  attributed: boolean;
  clickId: string | null;
  accountId: number | null;
  linkId: number | null;
  trafficSourceId: number | null;
  externalId: string | null;
  names: { account: string | null; link: string | null; trafficSource: string | null };
};

const COLUMNS: Column<ConversionRow>[] = [
  {
    key: "occurredAt",
    label: "Occurred (UTC)",
    cell: (c) => (
      <Link to="/conversions/$conversionId" params={{ conversionId: c.id }} title={formatDateTime(c.occurredAt)}>
        {shortDateTime(c.occurredAt)}
      </Link>
    ),
  },
  { key: "type", label: "Type", cell: (c) => typeLabel(c.type) },
  { key: "status", label: "Status", cell: (c) => <StatusBadge status={c.status} /> },
  {
    key: "value",
    label: "Value",
    numeric: true,
    cell: (c) => <ConversionValue value={c.value} currency={c.currency} />,
  },
  {
    key: "clickId",
    label: "Click id",
    // The click is what attributes a conversion: an unknown one is flagged beside it.
    cell: (c) => (
      <>
        {c.clickId ? <Truncated text={c.clickId} /> : <Absent />}
        {!c.attributed && <span className="badge unattributed">unattributed</span>}
      </>
    ),
  },
  {
    key: "accountId",
    label: "Account",
    // The API answers the names (with catalog.read); the id stands in without them.
    cell: (c) =>
      c.accountId === null ? (
        <Absent />
      ) : (
        <Link to="/accounts/$accountId" params={{ accountId: String(c.accountId) }} search={{}}>
          {c.names.account ?? `#${c.accountId}`}
        </Link>
      ),
  },
  {
    key: "linkId",
    label: "Link",
    cell: (c) => (c.linkId === null ? <Absent /> : (c.names.link ?? `#${c.linkId}`)),
  },
  {
    key: "trafficSourceId",
    label: "Traffic source",
    cell: (c) => (c.trafficSourceId === null ? <Absent /> : (c.names.trafficSource ?? `#${c.trafficSourceId}`)),
  },
  {
    key: "externalId",
    label: "External id",
    cell: (c) => (c.externalId ? <Truncated text={c.externalId} /> : <Absent />),
  },
];

/** A long id cut to the column's width; the whole of it in the title and for screen readers. */
function Truncated({ text }: { text: string }) {
  return (
    <code className="truncated" title={text}>
      {text}
    </code>
  );
}

/** An empty cell that still says so to a screen reader. */
function Absent() {
  return (
    <span className="muted">
      <span aria-hidden="true">—</span>
      <span className="visually-hidden">none</span>
    </span>
  );
}

export function ConversionsPage() {
  const search = conversionsRoute.useSearch();
  const navigate = useNavigate();
  const go = (next: ConversionSearch) => void navigate({ to: "/conversions", search: next });
  // The dates filter by the account's days: asked once the zone is known, so the page can name it.
  const account = useAccountTimeZone();
  const list = useQuery({
    ...conversionsQuery(search, account.zone),
    enabled: account.settled,
    placeholderData: keepPreviousData,
  });
  const filtered = Boolean(
    search.from || search.to || search.type || search.clickId || search.externalId || search.source || search.status,
  );

  return (
    <>
      <div className="page-head">
        <h1>Conversions</h1>
      </div>
      <p className="muted" data-testid="dates-zone">
        The From and To dates are whole days in {account.zone ?? "the account's time zone"}
        {account.zone ? ", the account's time zone" : ""} (set under Settings). Times in the list are UTC.
      </p>
      <Filters search={search} error={list.error} onApply={(filters) => go(withFilters(filters))} />
      <ExportCsv search={search} zone={account.zone} total={list.data?.pagination.total} />
      <section aria-labelledby="conversions-title" aria-busy={list.isFetching}>
        <h2 id="conversions-title" className="visually-hidden">
          Conversions, newest first
        </h2>
        {list.isPending ? (
          <Loading label="Loading the conversions…" />
        ) : list.isError && !list.data ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} />
        ) : list.data ? (
          <>
            <div className="conversions-table">
              <DataTable
                caption="Conversions, newest first"
                columns={COLUMNS}
                rows={list.data.data}
                rowKey={(c) => c.id}
                empty={filtered ? "No conversion matches these filters." : "No conversions have been recorded yet."}
              />
            </div>
            <Pager
              label="Conversions"
              page={list.data.pagination}
              onOffset={(offset) => go(withOffset(search, offset))}
            />
          </>
        ) : null}
      </section>
    </>
  );
}

interface FilterValues {
  from: string;
  to: string;
  type: ConversionType | "";
  clickId: string;
  externalId: string;
  source: string;
  status: ConversionStatus[];
}

/** The filters the list route offers: the days it occurred, its type, its status and its click id. */
function Filters({
  search,
  error,
  onApply,
}: {
  search: ConversionSearch;
  error: unknown;
  onApply: (filters: ConversionFilters) => void;
}) {
  const fromUrl = (): FilterValues => ({
    from: search.from ?? "",
    to: search.to ?? "",
    type: search.type ?? "",
    clickId: search.clickId ?? "",
    externalId: search.externalId ?? "",
    source: search.source ? String(search.source) : "",
    status: statusList(search.status),
  });
  const { values, setValues, set } = useUrlForm<FilterValues>(fromUrl, JSON.stringify(search));
  // The sources are found by typing (the catalog's search), for whoever may read the catalog.
  const canReadCatalog = useCan()("catalog.read");
  const sources = useMemo(() => catalogPicker("traffic-sources"), []);
  const [problem, setProblem] = useState<string | null>(null);

  function apply(event: FormEvent) {
    event.preventDefault();
    if (values.from && values.to && values.from > values.to) {
      setProblem("The start date must be on or before the end date.");
      return;
    }
    setProblem(null);
    onApply({
      ...(values.from ? { from: values.from } : {}),
      ...(values.to ? { to: values.to } : {}),
      ...(values.type ? { type: values.type } : {}),
      ...(values.clickId.trim() ? { clickId: values.clickId.trim() } : {}),
      ...(values.externalId.trim() ? { externalId: values.externalId.trim() } : {}),
      ...(values.source ? { source: Number(values.source) } : {}),
      ...(values.status.length > 0 ? { status: values.status } : {}),
    });
  }

  const apiError = (name: string) => fieldError(error, name);
  const toggleStatus = (status: ConversionStatus, on: boolean) =>
    setValues((v) => ({
      ...v,
      status: CONVERSION_STATUSES.filter((s) => (s === status ? on : v.status.includes(s))),
    }));
  return (
    <form className="toolbar conversion-filters" onSubmit={apply} noValidate aria-label="Filters">
      <Field label="From" error={apiError("dateFrom")}>
        {(props) => <input {...props} type="date" value={values.from} onChange={set("from")} />}
      </Field>
      <Field label="To" error={apiError("dateTo")}>
        {(props) => <input {...props} type="date" value={values.to} onChange={set("to")} />}
      </Field>
      <Field label="Type" error={apiError("type")}>
        {(props) => (
          <select {...props} value={values.type} onChange={set("type")}>
            <option value="">Any type</option>
            {CONVERSION_TYPES.map((type) => (
              <option key={type} value={type}>
                {typeLabel(type)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Click id" error={apiError("clickId")}>
        {(props) => (
          <input
            {...props}
            type="text"
            value={values.clickId}
            maxLength={100}
            spellCheck={false}
            onChange={set("clickId")}
          />
        )}
      </Field>
      <Field label="External id" error={apiError("externalId")}>
        {(props) => (
          <input
            {...props}
            type="text"
            value={values.externalId}
            maxLength={200}
            spellCheck={false}
            onChange={set("externalId")}
          />
        )}
      </Field>
      {canReadCatalog && (
        <SearchPicker
          label="Traffic source"
          source={sources}
          value={values.source === "" ? undefined : Number(values.source)}
          onChange={(id) => setValues((v) => ({ ...v, source: id === undefined ? "" : String(id) }))}
          none="Any source"
          error={apiError("trafficSourceId")}
        />
      )}
      <fieldset className="status-filter" aria-describedby="status-filter-hint">
        <legend>Status</legend>
        <div className="status-choices">
          {CONVERSION_STATUSES.map((status) => (
            <label key={status}>
              <input
                type="checkbox"
                name="status"
                value={status}
                checked={values.status.includes(status)}
                onChange={(e) => toggleStatus(status, e.target.checked)}
              />
              {statusLabel(status)}
            </label>
          ))}
        </div>
        <p id="status-filter-hint" className="visually-hidden">
          None checked: every status.
        </p>
        {apiError("status") && (
          <p className="field-error" role="alert">
            {apiError("status")}
          </p>
        )}
      </fieldset>
      <div className="actions">
        <button type="submit" className="button primary">
          Apply
        </button>
        <button
          type="button"
          className="button secondary"
          onClick={() => {
            setProblem(null);
            onApply({});
          }}
        >
          Clear
        </button>
      </div>
      {problem && (
        <p className="field-error filters-problem" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}

/** Downloads the filtered list as CSV, page by page, with its progress (export-csv.ts). */
function ExportCsv({
  search,
  zone,
  total,
}: {
  search: ConversionSearch;
  zone: string | undefined;
  total: number | undefined;
}) {
  const [progress, setProgress] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function run() {
    setBusy(true);
    setProgress("Preparing the export…");
    try {
      const { rows, total: matched } = await exportConversions(search, zone, (done, of) =>
        setProgress(`Exporting ${formatInteger(done)} of ${formatInteger(of)} conversions…`),
      );
      saveFile(`conversions-${new Date().toISOString().slice(0, 10)}.csv`, conversionsCsv(rows), "text/csv");
      setProgress(
        matched > rows.length
          ? `Exported the newest ${formatInteger(rows.length)} of ${formatInteger(matched)}: narrow the filters for the rest.`
          : `Exported ${formatInteger(rows.length)} conversions.`,
      );
    } catch (error) {
      setProgress(`The export failed: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="conversions-export">
      <button type="button" className="button secondary" onClick={() => void run()} disabled={busy || total === 0}>
        Export CSV
      </button>
      <span className="muted small" role="status">
        {progress ??
          (total !== undefined && total > EXPORT_MAX_ROWS
            ? `The export holds the newest ${formatInteger(EXPORT_MAX_ROWS)} of the ${formatInteger(total)} matching.`
            : "")}
      </span>
    </div>
  );
}
