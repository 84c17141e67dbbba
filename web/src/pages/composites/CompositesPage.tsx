import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { useReportZone } from "../../account-time-zone";
import { CurrencyPicker, UnconvertedNotice } from "../../components/Currency";
import { fieldError } from "../../components/Field";
import { Pager } from "../../components/Pager";
import { PeriodPresets } from "../../components/PeriodPresets";
import { ErrorState, Loading } from "../../components/states";
import { TimeZonePicker } from "../../components/TimeZonePicker";
import { CompositeToolbar } from "./CompositeToolbar";
import { MetricsTable } from "./MetricsTable";
import { PeriodControls, PeriodSummary } from "./PeriodControls";
import { accountsMetricsQuery } from "./queries";
import { type CompositeSearch, changed, periodSearch, periodsOf, sortOf, withPeriod } from "./search";
import "./composites.css";
import { withOffset } from "../../search-params";

// The page reaches its route by id: its routes module imports it, never the other way.
const compositesRoute = getRouteApi("/app/accounts");

export function CompositesPage() {
  const search = compositesRoute.useSearch();
  const navigate = useNavigate();
  const go = (next: CompositeSearch) => void navigate({ to: "/accounts", search: next });
  // The zone chosen, else the account's: the figures wait until it is known.
  const { zone, accountZone, ready } = useReportZone(search.tz);
  const now = Date.now();
  const periods = periodsOf(search, zone, now);
  const sort = sortOf(search);
  const accounts = useQuery({
    ...accountsMetricsQuery(search, zone, now),
    enabled: ready,
    placeholderData: keepPreviousData,
  });
  // An unknown currency or zone in the address: the API's message shows beside its picker.
  const currencyError = fieldError(accounts.error, "currency");
  const zoneError = fieldError(accounts.error, "timeZone");
  const period = periodSearch(search);

  return (
    <>
      <div className="page-head">
        <h1>Accounts and links</h1>
      </div>
      <PeriodPresets range={periods.range} zone={zone} now={now} onPick={(range) => go(withPeriod(search, range))} />
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
          shown={accounts.data?.meta.currency}
          onChange={(currency) => go(changed(search, { currency }))}
          error={currencyError}
        />
      </div>
      <PeriodSummary periods={periods} zone={accounts.data?.meta.timeZone ?? zone} />
      <CompositeToolbar
        searchLabel="account names"
        q={search.q}
        onSearch={(q) => go(changed(search, { q }))}
        sort={sort}
        onSort={(next) => go(changed(search, { sort: next.by, dir: next.direction }))}
        status={{ value: search.status, onChange: (status) => go(changed(search, { status })) }}
      />
      <section aria-labelledby="accounts-title" aria-busy={accounts.isFetching}>
        <h2 id="accounts-title" className="visually-hidden">
          Accounts
        </h2>
        {accounts.isPending ? (
          <Loading label="Loading the accounts…" />
        ) : accounts.isError && (currencyError || zoneError) ? (
          <p className="notice error">
            The figures were refused: the message is beside the {zoneError ? "time zone" : "currency"}.
          </p>
        ) : accounts.isError ? (
          <ErrorState error={accounts.error} onRetry={() => void accounts.refetch()} />
        ) : (
          <>
            <UnconvertedNotice meta={accounts.data.meta} />
            <MetricsTable
              caption="Accounts with their metrics and the comparison period's"
              nameLabel="Account"
              rows={accounts.data.data}
              currency={accounts.data.meta.currency}
              sort={sort}
              onSort={(next) => go(changed(search, { sort: next.by, dir: next.direction }))}
              empty={search.q || search.status ? "No account matches this search." : "There are no accounts yet."}
              nameCell={(account) => (
                <>
                  <Link to="/accounts/$accountId" params={{ accountId: String(account.id) }} search={period}>
                    {account.name}
                  </Link>
                  <span className="row-detail">
                    {account.username && <span>{account.username}</span>}
                    <span className={`badge status-${account.status}`}>{account.status}</span>
                  </span>
                </>
              )}
            />
            <Pager
              label="Accounts"
              page={accounts.data.pagination}
              onOffset={(offset) => go(withOffset(search, offset))}
            />
          </>
        )}
      </section>
    </>
  );
}
