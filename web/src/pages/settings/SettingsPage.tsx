import { useQuery } from "@tanstack/react-query";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime, formatInteger } from "../../format";
import { useMe } from "../../me";
import { useCan } from "../../permissions";
import { CurrencyForm } from "./CurrencyForm";
import { ExchangeRates } from "./ExchangeRates";
import { MePanel } from "./MePanel";
import { PostbackKey } from "./PostbackKey";
import { settingsQuery } from "./queries";
import { TimeZoneForm } from "./TimeZoneForm";
import "./settings.css";
import { Fact } from "../../components/Facts";

/** The signed-in person, what the account may change through /api/v1/settings, and the exchange rates. */
export function SettingsPage() {
  const me = useMe();
  const can = useCan();
  const admin = can("account.admin");
  const settings = useQuery({ ...settingsQuery, enabled: admin });

  return (
    <>
      <h1>Settings</h1>
      <div className="settings">
        <MePanel />
        <section className="panel" aria-labelledby="account-title">
          <h2 id="account-title">Account</h2>
          {me.isPending ? (
            <Loading label="Loading your permissions…" />
          ) : !admin ? (
            <p className="notice warning" role="status">
              The account's settings are managed by account admins: your permissions do not include{" "}
              <code>account.admin</code>.
            </p>
          ) : settings.isPending ? (
            <Loading label="Loading the settings…" />
          ) : settings.isError ? (
            <ErrorState error={settings.error} onRetry={() => void settings.refetch()} />
          ) : (
            <>
              <dl className="facts">
                <Fact label="Account">
                  {settings.data.name} <span className="muted small">({settings.data.id})</span>
                </Fact>
                <Fact label="Created">{formatDateTime(settings.data.createdAt)}</Fact>
                <Fact label="API keys">
                  {settings.data.entitlements.apiTokens ? "Included" : "Not included in the plan"}
                </Fact>
                <Fact label="Click webhooks">
                  {settings.data.entitlements.clickWebhooks ? "Included" : "Not included in the plan"}
                </Fact>
                <Fact label="Postback allowance">
                  {settings.data.webhookAllowance === null
                    ? "Unlimited"
                    : `${formatInteger(settings.data.webhookAllowance)} postbacks per calendar month (UTC)`}
                </Fact>
              </dl>
              <p className="muted small">The plan and allowance are set by the operator.</p>
              <div className="settings-forms">
                <CurrencyForm setting="defaultCurrency" settings={settings.data} />
                <CurrencyForm setting="reportingCurrency" settings={settings.data} />
                <TimeZoneForm settings={settings.data} />
                <PostbackKey
                  template={settings.data.postbackUrlTemplate}
                  canRotate={admin}
                  previousKeyValidUntil={settings.data.previousKeyValidUntil}
                  timeZone={settings.data.timeZone}
                />
              </div>
            </>
          )}
        </section>
        {/* The rates reports convert with: read by whoever reads reports, added by account admins. */}
        {(can("reports.read") || admin) && <ExchangeRates canChange={admin} />}
      </div>
    </>
  );
}
