import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { CopyButton } from "../../components/CopyButton";
import { Field, fieldError } from "../../components/Field";
import { ErrorState, Loading } from "../../components/states";
import { RowSelect } from "./EntityFields";
import { FIRST_ROW, generatedLinkQuery, rowsQuery } from "./queries";
import type { GeneratorSearch } from "./search";

// The page reaches its route by id: its routes module imports it, never the other way.
const linkGeneratorRoute = getRouteApi("/app/catalog/link-generator");

const NEW_TRACKER = "new";

/** The tracking URL of a brand link on a traffic source, with a tracker: the API builds it. */
export function LinkGeneratorPage() {
  const search = linkGeneratorRoute.useSearch();
  // Only whether there are any: the pickers find the rows by typing.
  const links = useQuery({ ...rowsQuery("links", FIRST_ROW), placeholderData: keepPreviousData });
  const sources = useQuery({ ...rowsQuery("traffic-sources", FIRST_ROW), placeholderData: keepPreviousData });
  const ready = search.link !== undefined && search.source !== undefined;
  const generated = useQuery({ ...generatedLinkQuery(search), enabled: ready });

  return (
    <>
      <div className="page-head">
        <h1>Link generator</h1>
      </div>
      <p className="muted">
        Choose a brand link, the traffic source that will carry it and, if you like, a tracker: the service answers the
        tracking URL to publish there.
      </p>
      {links.isPending || sources.isPending ? (
        <Loading label="Loading the brand links and traffic sources…" />
      ) : links.isError || sources.isError ? (
        <ErrorState
          error={links.error ?? sources.error}
          onRetry={() => {
            void links.refetch();
            void sources.refetch();
          }}
        />
      ) : links.data.rows.length === 0 || sources.data.rows.length === 0 ? (
        <p className="state state-empty">
          A tracking URL needs a{" "}
          <Link to="/catalog/$entity" params={{ entity: "links" }}>
            brand link
          </Link>{" "}
          and a{" "}
          <Link to="/catalog/$entity" params={{ entity: "traffic-sources" }}>
            traffic source
          </Link>
          : create them first.
        </p>
      ) : (
        <GeneratorForm key={JSON.stringify(search)} search={search} error={generated.error} />
      )}
      {ready && (
        <section className="panel catalog-generated" aria-labelledby="generated-title">
          <h2 id="generated-title">Tracking URL</h2>
          {generated.isPending ? (
            <Loading label="Generating…" />
          ) : generated.isError ? (
            fieldError(generated.error, "tracker") ? (
              <p className="muted">No URL: the tracker was refused (see its message above).</p>
            ) : (
              <ErrorState error={generated.error} onRetry={() => void generated.refetch()} />
            )
          ) : (
            <>
              <p className="catalog-url-out">
                <code data-testid="tracking-url">{generated.data.url}</code>
              </p>
              <p className="actions">
                <CopyButton value={generated.data.url} label="Copy URL" />
              </p>
              <p className="muted small">
                {generated.data.tracker === null
                  ? "No tracker."
                  : generated.data.tracker.isNew
                    ? `Tracker '${generated.data.tracker.name}' is new: it becomes a tracker on the first click.`
                    : `Tracker '${generated.data.tracker.name}' (#${generated.data.tracker.id}).`}
              </p>
              {generated.data.warnings.map((w) => (
                <p key={`${w.field}-${w.message}`} className="notice warning" role="status">
                  {w.message}
                </p>
              ))}
            </>
          )}
        </section>
      )}
    </>
  );
}

interface GeneratorFormProps {
  search: GeneratorSearch;
  /** The API's refusal of the last choice: a tracker's message goes next to the tracker. */
  error: unknown;
}

function GeneratorForm({ search, error }: GeneratorFormProps) {
  const navigate = useNavigate({ from: "/catalog/link-generator" });
  const [link, setLink] = useState(search.link === undefined ? "" : String(search.link));
  const [source, setSource] = useState(search.source === undefined ? "" : String(search.source));
  const [tracker, setTracker] = useState(
    search.trackerId !== undefined ? String(search.trackerId) : search.trackerName ? NEW_TRACKER : "",
  );
  const [trackerName, setTrackerName] = useState(search.trackerName ?? "");
  const [missing, setMissing] = useState<{ link?: string; source?: string }>({});
  const trackerError = fieldError(error, "tracker");

  const submit = (event: FormEvent) => {
    event.preventDefault();
    // Both are parts of the API's path: without them there is nothing to ask.
    const gaps = {
      ...(link === "" ? { link: "Choose a brand link." } : {}),
      ...(source === "" ? { source: "Choose a traffic source." } : {}),
    };
    setMissing(gaps);
    if (Object.keys(gaps).length > 0) return;
    void navigate({
      search: {
        link: Number(link),
        source: Number(source),
        trackerId: tracker !== "" && tracker !== NEW_TRACKER ? Number(tracker) : undefined,
        trackerName: tracker === NEW_TRACKER ? trackerName : undefined,
      },
    });
  };

  return (
    <form className="form-panel" onSubmit={submit} noValidate aria-label="Tracking URL choices">
      <RowSelect
        label="Brand link"
        entity="links"
        value={link}
        onChange={setLink}
        error={missing.link}
        none="Choose a brand link"
      />
      <RowSelect
        label="Traffic source"
        entity="traffic-sources"
        value={source}
        onChange={setSource}
        error={missing.source}
        none="Choose a traffic source"
      />
      <RowSelect
        label="Tracker"
        entity="trackers"
        value={tracker}
        onChange={setTracker}
        error={tracker === NEW_TRACKER ? undefined : trackerError}
        none="No tracker"
        extra={{ value: NEW_TRACKER, label: "A new tracker…" }}
      />
      {tracker === NEW_TRACKER && (
        <Field
          label="New tracker name"
          hint="4 to 50 characters, not digits only; it becomes a tracker on the first click."
          error={trackerError}
        >
          {(control) => (
            <input
              {...control}
              type="text"
              autoComplete="off"
              value={trackerName}
              onChange={(e) => setTrackerName(e.target.value)}
            />
          )}
        </Field>
      )}
      <div className="actions">
        <button type="submit" className="button primary">
          Show tracking URL
        </button>
      </div>
    </form>
  );
}
