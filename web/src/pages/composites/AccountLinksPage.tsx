import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { useReportZone } from "../../account-time-zone";
import { ApiFailure } from "../../api/client";
import { CurrencyPicker, UnconvertedNotice } from "../../components/Currency";
import { fieldError } from "../../components/Field";
import { Pager } from "../../components/Pager";
import { PeriodPresets } from "../../components/PeriodPresets";
import { ErrorState, Loading } from "../../components/states";
import { TimeZonePicker } from "../../components/TimeZonePicker";
import { CompositeToolbar } from "./CompositeToolbar";
import { MetricsTable } from "./MetricsTable";
import { PeriodControls, PeriodSummary } from "./PeriodControls";
import { accountIdOf, accountQuery, linksMetricsQuery } from "./queries";
import { type CompositeSearch, changed, periodSearch, periodsOf, sortOf, withPeriod } from "./search";
import "./composites.css";
import { withOffset } from "../../search-params";

// The page reaches its route by id: its routes module imports it, never the other way.
const accountLinksRoute = getRouteApi("/app/accounts/$accountId");

const isNotFound = (error: unknown) => error instanceof ApiFailure && error.status === 404;

export function AccountLinksPage() {
  const { accountId: raw } = accountLinksRoute.useParams();
  const accountId = accountIdOf(raw);
  const search = accountLinksRoute.useSearch();
  const navigate = useNavigate();
  const go = (next: CompositeSearch) =>
    void navigate({ to: "/accounts/$accountId", params: { accountId: raw }, search: next });
  // The zone chosen, else the account's: the figures wait until it is known.
  const { zone, accountZone, ready } = useReportZone(search.tz);
  const now = Date.now();
  const periods = periodsOf(search, zone, now);
  const sort = sortOf(search);
  const account = useQuery({ ...accountQuery(accountId ?? 0), enabled: accountId !== null });
  const links = useQuery({
    ...linksMetricsQuery(search, zone, now, accountId ?? 0),
    placeholderData: keepPreviousData,
    enabled: ready && accountId !== null && account.isSuccess,
  });
  // An unknown currency or zone in the address: the API's message shows beside its picker.
  const currencyError = fieldError(links.error, "currency");
  const zoneError = fieldError(links.error, "timeZone");
  const title = account.data ? account.data.data.name : `Account ${raw}`;

  return (
    <>
      <p className="breadcrumb">
        <Link to="/accounts" search={periodSearch(search)}>
          Accounts and links
        </Link>{" "}
        / {title}
      </p>
      <div className="page-head">
        <h1>{title}</h1>
        {account.data && (
          <p className="account-facts">
            {account.data.data.username && <span className="muted">{account.data.data.username}</span>}
            <span className={`badge status-${account.data.data.status}`}>{account.data.data.status}</span>
          </p>
        )}
      </div>
      {accountId === null ? (
        <ErrorState error={new Error(`'${raw}' is not an account id.`)} />
      ) : account.isPending ? (
        <Loading label="Loading the account…" />
      ) : account.isError ? (
        <ErrorState
          error={account.error}
          // Not found stays not found: a retry is offered only where one may help.
          {...(isNotFound(account.error) ? {} : { onRetry: () => void account.refetch() })}
        />
      ) : (
        <>
          <PeriodPresets
            range={periods.range}
            zone={zone}
            now={now}
            onPick={(range) => go(withPeriod(search, range))}
          />
          <div className="period-row">
            <PeriodControls periods={periods} onApply={(choice) => go(withPeriod(search, choice))} />
            <TimeZonePicker
              inline
              value={search.tz}
              accountZone={accountZone}
              onChange={(tz) => go(changed(search, { tz }))}
              error={zoneError}
            />
            <CurrencyPicker
              inline
              value={search.currency}
              shown={links.data?.meta.currency}
              onChange={(currency) => go(changed(search, { currency }))}
              error={currencyError}
            />
          </div>
          <PeriodSummary periods={periods} zone={links.data?.meta.timeZone ?? zone} />
          <CompositeToolbar
            searchLabel="link names"
            q={search.q}
            onSearch={(q) => go(changed(search, { q }))}
            sort={sort}
            onSort={(next) => go(changed(search, { sort: next.by, dir: next.direction }))}
          />
          <section aria-labelledby="links-title" aria-busy={links.isFetching}>
            <h2 id="links-title">Links</h2>
            {links.isPending ? (
              <Loading label="Loading the links…" />
            ) : links.isError && (currencyError || zoneError) ? (
              <p className="notice error">
                The figures were refused: the message is beside the {zoneError ? "time zone" : "currency"}.
              </p>
            ) : links.isError ? (
              <ErrorState error={links.error} onRetry={() => void links.refetch()} />
            ) : (
              <>
                <UnconvertedNotice meta={links.data.meta} />
                <MetricsTable
                  caption={`Links of ${title} with their metrics and the comparison period's`}
                  nameLabel="Link"
                  rows={links.data.data}
                  currency={links.data.meta.currency}
                  sort={sort}
                  onSort={(next) => go(changed(search, { sort: next.by, dir: next.direction }))}
                  empty={search.q ? "No link of this account matches this search." : "This account has no links yet."}
                  nameCell={(link) => (
                    <>
                      <span className="row-name">{link.name}</span>
                      <span className="row-detail link-url" title={link.url}>
                        {link.url}
                      </span>
                    </>
                  )}
                />
                <Pager
                  label="Links"
                  page={links.data.pagination}
                  onOffset={(offset) => go(withOffset(search, offset))}
                />
              </>
            )}
          </section>
        </>
      )}
    </>
  );
}
