import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link } from "@tanstack/react-router";
import { type Column, DataTable } from "../../components/DataTable";
import { Facts } from "../../components/Facts";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime } from "../../format";
import { conversionTypeLabel } from "../../vocabulary";
import { clickQuery } from "./queries";
import { botReasonLabel } from "./search";
import "./logs.css";

const route = getRouteApi("/app/clicks/$clickId");

type Click = Awaited<ReturnType<ReturnType<typeof clickQuery>["queryFn"]>>;
type PageView = Click["pageViews"][number];
type Conversion = Click["conversions"][number];

const dash = (value: string | number | null) => (value === null ? "—" : String(value));

const VIEW_COLUMNS: Column<PageView>[] = [
  { key: "at", label: "Time", cell: (v) => formatDateTime(v.at) },
  { key: "url", label: "Page", cell: (v) => <span className="log-url">{v.url}</span> },
  { key: "title", label: "Title", cell: (v) => dash(v.title) },
];

const CONVERSION_COLUMNS: Column<Conversion>[] = [
  { key: "at", label: "Occurred", cell: (c) => formatDateTime(c.occurredAt) },
  {
    key: "id",
    label: "Conversion",
    cell: (c) => (
      <Link to="/conversions/$conversionId" params={{ conversionId: c.id }} className="mono">
        {c.id}
      </Link>
    ),
  },
  { key: "type", label: "Type", cell: (c) => conversionTypeLabel(c.type) },
  { key: "status", label: "Status", cell: (c) => c.status },
];

/** One click: what the service worked out about it, what it carried, its page views and conversions. */
export function ClickPage() {
  const { clickId } = route.useParams();
  const click = useQuery(clickQuery(clickId));
  return (
    <>
      <div className="page-head">
        <h1>Click</h1>
        <Link to="/clicks" className="button secondary">
          Every click
        </Link>
      </div>
      {click.isPending ? (
        <Loading label="Loading the click…" />
      ) : click.isError ? (
        <ErrorState error={click.error} onRetry={() => void click.refetch()} />
      ) : (
        <ClickDetails click={click.data} />
      )}
    </>
  );
}

function ClickDetails({ click }: { click: Click }) {
  return (
    <>
      <section className="panel" aria-labelledby="click-facts">
        <h2 id="click-facts">Facts</h2>
        <Facts
          facts={[
            [
              "Click id",
              <span key="id" className="mono">
                {click.id}
              </span>,
            ],
            ["Time", formatDateTime(click.at)],
            ["Made by", click.bot ? botReasonLabel(click.botReason) : "Person"],
            ["Unique", click.unique ? "Yes, the visitor's first click here that day" : "No"],
            ["Country", dash(click.country)],
            ["Device", dash(click.device)],
            ["OS", dash(click.os)],
            ["Browser", dash(click.browser)],
            ["Network", dash(click.ip)],
            [
              "User agent",
              <span key="ua" className="log-url">
                {dash(click.userAgent)}
              </span>,
            ],
            [
              "Referrer",
              <span key="referrer" className="log-url">
                {dash(click.referrer)}
              </span>,
            ],
          ]}
        />
      </section>
      <section className="panel" aria-labelledby="click-carried">
        <h2 id="click-carried">What it carried</h2>
        <Facts
          facts={[
            ["Link", `#${click.linkId}`],
            ["Traffic source", `#${click.trafficSourceId}`],
            ["Tracker", click.trackerId === null ? "—" : `#${click.trackerId}`],
            ["Sub-id A (pa)", dash(click.parameterA)],
            ["Sub-id B (pb)", dash(click.parameterB)],
            ["gclid", dash(click.gclid)],
            ["fbclid", dash(click.fbclid)],
            ["msclkid", dash(click.msclkid)],
            ["Network's click id", dash(click.sourceClickId)],
            ["External click id", dash(click.externalClickId)],
          ]}
        />
      </section>
      <section className="panel" aria-labelledby="click-conversions">
        <h2 id="click-conversions">Conversions</h2>
        <DataTable
          caption="Conversions of this click"
          columns={CONVERSION_COLUMNS}
          rows={click.conversions}
          rowKey={(c) => c.id}
          empty="No conversion has been attributed to this click."
        />
        <p>
          <Link to="/postback-log" search={{ clickId: click.id }}>
            Postbacks that named this click
          </Link>
        </p>
      </section>
      <section className="panel" aria-labelledby="click-views">
        <h2 id="click-views">Page views</h2>
        <DataTable
          caption="Page views of this click"
          columns={VIEW_COLUMNS}
          rows={click.pageViews}
          rowKey={(v) => `${v.at} ${v.url}`}
          empty="The landing page sent no page views for this click."
        />
      </section>
    </>
  );
}
