import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link } from "@tanstack/react-router";
import { ApiFailure } from "../../api/client";
import { Fact } from "../../components/Facts";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime } from "../../format";
import { CatalogName } from "./CatalogName";
import { ConversionValue } from "./ConversionValue";
import { Postbacks } from "./Postbacks";
import { conversionRecordQuery } from "./queries";
import { StatusBadge } from "./StatusBadge";
import { StatusSection } from "./StatusSection";
import { typeLabel } from "./search";
import "./conversions.css";

// The page reaches its route by id: its routes module imports it, never the other way.
const conversionRoute = getRouteApi("/app/conversions/$conversionId");

const orNone = (value: string | number | null) => (value === null ? <span className="muted">none</span> : value);

const isNotFound = (error: unknown) => error instanceof ApiFailure && error.status === 404;

export function ConversionPage() {
  const { conversionId } = conversionRoute.useParams();
  const conversion = useQuery(conversionRecordQuery(conversionId));

  return (
    <div className="conversion-page">
      <p className="breadcrumb">
        <Link to="/conversions">Conversions</Link> / {conversionId}
      </p>
      {conversion.isPending ? (
        <Loading label="Loading the conversion…" />
      ) : conversion.isError ? (
        <>
          <h1>Conversion</h1>
          <ErrorState
            error={conversion.error}
            // Not found stays not found: a retry is offered only where one may help.
            {...(isNotFound(conversion.error) ? {} : { onRetry: () => void conversion.refetch() })}
          />
        </>
      ) : (
        <>
          <div className="page-head">
            <h1>
              {typeLabel(conversion.data.type)} <span className="muted heading-id">{conversion.data.id}</span>
            </h1>
          </div>
          <section className="panel" aria-labelledby="details-title">
            <h2 id="details-title">Details</h2>
            <dl className="facts">
              <Fact label="Type">{typeLabel(conversion.data.type)}</Fact>
              <Fact label="Status">
                <StatusBadge status={conversion.data.status} />
              </Fact>
              <Fact label="Event name">{conversion.data.eventName}</Fact>
              <Fact label="Value">
                <ConversionValue value={conversion.data.value} currency={conversion.data.currency} />
              </Fact>
              <Fact label="Occurred">{formatDateTime(conversion.data.occurredAt)}</Fact>
              <Fact label="Recorded">{formatDateTime(conversion.data.recordedAt)}</Fact>
              <Fact label="Click id">
                {conversion.data.clickId ? (
                  conversion.data.attributed ? (
                    <Link to="/clicks/$clickId" params={{ clickId: conversion.data.clickId }}>
                      <code>{conversion.data.clickId}</code>
                    </Link>
                  ) : (
                    <code>{conversion.data.clickId}</code>
                  )
                ) : (
                  orNone(null)
                )}
              </Fact>
              <Fact label="Attributed">
                {conversion.data.attributed ? "Yes, to a known click" : "No: the click is absent or unknown"}
              </Fact>
              <Fact label="Attribution source">{conversion.data.attributionSource}</Fact>
              <Fact label="External id">
                {conversion.data.externalId ? (
                  <>
                    <code>{conversion.data.externalId}</code>{" "}
                    <Link to="/postback-log" search={{ externalId: conversion.data.externalId }}>
                      Postback log
                    </Link>
                  </>
                ) : (
                  orNone(null)
                )}
              </Fact>
              <Fact label="Account">
                <CatalogName kind="accounts" id={conversion.data.accountId} />
                {conversion.data.accountId !== null && (
                  <>
                    {" "}
                    <Link
                      to="/accounts/$accountId"
                      params={{ accountId: String(conversion.data.accountId) }}
                      search={{}}
                    >
                      Links and metrics
                    </Link>
                  </>
                )}
              </Fact>
              <Fact label="Link">
                <CatalogName kind="links" id={conversion.data.linkId} />
              </Fact>
              <Fact label="Program">
                <CatalogName kind="programs" id={conversion.data.programId} />
              </Fact>
              <Fact label="Brand">
                <CatalogName kind="brands" id={conversion.data.brandId} />
              </Fact>
              <Fact label="Traffic source">
                <CatalogName kind="traffic-sources" id={conversion.data.trafficSourceId} />
              </Fact>
              <Fact label="Tracker">
                <CatalogName kind="trackers" id={conversion.data.trackerId} />
              </Fact>
            </dl>
          </section>
          <StatusSection conversionId={conversion.data.id} status={conversion.data.status} />
          <Postbacks conversionId={conversion.data.id} />
          <section className="panel" aria-labelledby="views-title">
            <h2 id="views-title">Page views before it</h2>
            {conversion.data.pageViews.length === 0 ? (
              <p className="muted">No page views were recorded for its click.</p>
            ) : (
              <ol className="page-views">
                {conversion.data.pageViews.map((view) => (
                  <li key={`${view.at}-${view.url}`}>
                    <span className="muted small">{formatDateTime(view.at)}</span>{" "}
                    <span className="page-view-title">{view.title ?? view.url}</span>
                    <span className="muted small page-view-url">{view.url}</span>
                  </li>
                ))}
              </ol>
            )}
          </section>
        </>
      )}
    </div>
  );
}
