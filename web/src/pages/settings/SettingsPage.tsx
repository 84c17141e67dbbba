import { useQuery } from "@tanstack/react-query";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime, formatInteger } from "../../format";
import { useMe } from "../../me";
import { useCan } from "../../permissions";
import { CurrencyForm } from "./CurrencyForm";
import { MePanel } from "./MePanel";
import { PostbackKey } from "./PostbackKey";
import { settingsQuery } from "./queries";
import "./settings.css";

/** The signed-in person, and what the account may change through /api/v1/settings. */
export function SettingsPage() {
  const me = useMe();
  const admin = useCan()("account.admin");
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
                <div className="fact">
                  <dt>Account</dt>
                  <dd>
                    {settings.data.name} <span className="muted small">({settings.data.id})</span>
                  </dd>
                </div>
                <div className="fact">
                  <dt>Created</dt>
                  <dd>{formatDateTime(settings.data.createdAt)}</dd>
                </div>
                <div className="fact">
                  <dt>API keys</dt>
                  <dd>{settings.data.entitlements.apiTokens ? "Included" : "Not included in the plan"}</dd>
                </div>
                <div className="fact">
                  <dt>Click webhooks</dt>
                  <dd>{settings.data.entitlements.clickWebhooks ? "Included" : "Not included in the plan"}</dd>
                </div>
                <div className="fact">
                  <dt>Postback allowance</dt>
                  <dd>
                    {settings.data.webhookAllowance === null
                      ? "Unlimited"
                      : `${formatInteger(settings.data.webhookAllowance)} postbacks per calendar month (UTC)`}
                  </dd>
                </div>
              </dl>
              <p className="muted small">The plan and allowance are set by the operator.</p>
              <div className="settings-forms">
                <CurrencyForm current={settings.data.defaultCurrency} />
                <PostbackKey template={settings.data.postbackUrlTemplate} canRotate={admin} />
              </div>
            </>
          )}
        </section>
      </div>
    </>
  );
}
