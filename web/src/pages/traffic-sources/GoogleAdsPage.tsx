import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { getRouteApi } from "@tanstack/react-router";
import { type FormEvent, type ReactNode, useState } from "react";
import { ConfirmButton } from "../../components/ConfirmButton";
import { Facts } from "../../components/Facts";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { ErrorState, Loading, messageOf } from "../../components/states";
import { formatDateTime, formatInteger } from "../../format";
import { useCan } from "../../permissions";
import { conversionTypeLabel } from "../../vocabulary";
import { catalogId } from "../catalog/search";
import { ActionResult, type Result } from "../webhooks/parts";
import { type GoogleAds, type GoogleAdsBody, googleAdsChanged, sourcesApi } from "./api";
import { ConnectionTestButton, ConnectionTestResult, useConnectionTest } from "./IntegrationTests";
import { EDIT_PERMISSION, SourceFrame } from "./parts";
import { googleAdsQuery } from "./queries";
import { actionsOf, REPORTED_TYPES } from "./search";

// The page reaches its route by id: its routes module imports it, never the other way.
const googleAdsRoute = getRouteApi("/app/catalog/traffic-sources/$sourceId/google-ads");

const FIELDS = ["accountId", "loginAccountId", "credentials", "conversionActions", "consent", "enabled"] as const;
const CONSENTS = ["adUserData", "adPersonalization"] as const;
type ConsentKey = (typeof CONSENTS)[number];
type ConsentValue = "" | "CONSENT_GRANTED" | "CONSENT_DENIED";
const CONSENT_NAME: Record<ConsentKey, string> = {
  adUserData: "Ad user data",
  adPersonalization: "Ad personalization",
};

interface Draft {
  accountId: string;
  loginAccountId: string;
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  actions: Record<string, string>;
  /** "" sends none. */
  consent: Record<ConsentKey, ConsentValue>;
  enabled: boolean;
}

/** The form's start: the stored values, never the secrets (the API does not hand them out). */
function draftOf(record: GoogleAds | null): Draft {
  return {
    accountId: record?.accountId ?? "",
    loginAccountId: record?.loginAccountId ?? "",
    clientId: record?.credentials.clientId ?? "",
    clientSecret: "",
    refreshToken: "",
    actions: { ...(record?.conversionActions ?? {}) } as Record<string, string>,
    consent: {
      adUserData: record?.consent?.adUserData ?? "",
      adPersonalization: record?.consent?.adPersonalization ?? "",
    },
    enabled: record?.enabled ?? true,
  };
}

/** The consent as the API takes it: only the answers given, null for none. */
type Consent = NonNullable<GoogleAdsBody["consent"]>;
function consentOf(consent: Record<ConsentKey, ConsentValue>): Consent | null {
  const given = Object.fromEntries(Object.entries(consent).filter(([, value]) => value !== ""));
  return Object.keys(given).length === 0 ? null : (given as Consent);
}

/** The stored consent in words ("ad user data: granted"), or that none is sent. */
function consentText(consent: Consent | null): string {
  const given = CONSENTS.filter((key) => consent?.[key]).map(
    (key) => `${CONSENT_NAME[key]}: ${consent?.[key] === "CONSENT_GRANTED" ? "granted" : "denied"}`,
  );
  return given.length === 0 ? "None sent" : given.join("; ");
}

/** A traffic source's Google Ads integration: where its conversions are uploaded as offline conversions. */
export function GoogleAdsPage() {
  const id = catalogId(googleAdsRoute.useParams().sourceId) ?? 0;
  return (
    <SourceFrame id={id} section="google-ads" title="Google Ads">
      {() => <GoogleAdsSetting id={id} />}
    </SourceFrame>
  );
}

function GoogleAdsSetting({ id }: { id: number }) {
  const record = useQuery(googleAdsQuery(id));
  const can = useCan();
  const [result, setResult] = useState<Result>(null);
  if (record.isPending) return <Loading label="Loading the Google Ads integration…" />;
  if (record.isError) return <ErrorState error={record.error} onRetry={() => void record.refetch()} />;
  const current = record.data;
  return (
    <>
      <p className="muted">
        Conversions of clicks from this source that carry a Google click id (gclid) are uploaded to Google Ads as
        offline conversions, each type to its conversion action. The uploads and Google's answers are listed under
        Google Ads uploads.
      </p>
      <ActionResult result={result} />
      {current && <Stored id={id} record={current} onResult={setResult} />}
      {can(EDIT_PERMISSION) ? (
        <SettingForm key={current?.updatedAt ?? "new"} id={id} record={current} onResult={setResult} />
      ) : (
        <p className="notice warning" role="status">
          Changing the integration needs the webhooks.update permission, which you do not have.
        </p>
      )}
    </>
  );
}

/** What is stored: the client id, never the secrets, which are only said to be there. */
function Stored({ id, record, onResult }: { id: number; record: GoogleAds; onResult: (result: Result) => void }) {
  const client = useQueryClient();
  const can = useCan();
  const remove = useMutation({
    mutationFn: () => sourcesApi.removeGoogleAds(id),
    onSuccess: async () => {
      onResult({ tone: "ok", text: "The Google Ads integration was deleted, with its credentials." });
      await googleAdsChanged(client, id);
    },
    onError: (error) => onResult({ tone: "error", text: messageOf(error) }),
  });
  const test = useConnectionTest(id);
  const actions = Object.entries(record.conversionActions as Record<string, string>);
  const facts: [string, ReactNode][] = [
    ["Status", record.enabled ? "Enabled" : "Disabled"],
    ["Customer account", record.accountId],
    ["Login account", record.loginAccountId ?? "—"],
    ["OAuth client id", <code key="client">{record.credentials.clientId}</code>],
    ["Client secret and refresh token", "Stored, never shown"],
    ["Consent", consentText(record.consent)],
    ["Waiting to upload", `${formatInteger(record.pendingEvents)} conversions`],
    [
      "Conversion actions",
      actions.length === 0
        ? "None"
        : actions.map(([type, action]) => (
            <span key={type} className="cell-line">
              {conversionTypeLabel(type)}: <code>{action}</code>
            </span>
          )),
    ],
    ["Updated", formatDateTime(record.updatedAt)],
  ];
  return (
    <section className="panel" aria-labelledby="google-ads-stored">
      <div className="page-head webhook-head">
        <h2 id="google-ads-stored">Saved integration</h2>
        {can(EDIT_PERMISSION) && (
          <p className="actions">
            <ConnectionTestButton test={test} />
            <ConfirmButton
              label="Delete integration"
              danger
              disabled={remove.isPending}
              question="Delete the Google Ads integration with its stored credentials? Conversions are no longer uploaded; the upload history stays."
              onConfirm={() => remove.mutate()}
            />
          </p>
        )}
      </div>
      <ConnectionTestResult test={test} />
      <Facts facts={facts} />
    </section>
  );
}

function SettingForm({
  id,
  record,
  onResult,
}: {
  id: number;
  record: GoogleAds | null;
  onResult: (result: Result) => void;
}) {
  const client = useQueryClient();
  const [draft, setDraft] = useState(() => draftOf(record));
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }));
  const save = useMutation({
    mutationFn: (body: GoogleAdsBody) => sourcesApi.saveGoogleAds(id, body),
    onSuccess: async () => {
      onResult({
        tone: "ok",
        text: "Saved. The client secret and refresh token are stored and will not be shown again.",
      });
      await googleAdsChanged(client, id);
    },
    onError: () => onResult(null),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const login = draft.loginAccountId.trim();
    save.mutate({
      accountId: draft.accountId.trim(),
      ...(login === "" ? {} : { loginAccountId: login }),
      // A secret left empty is kept as stored (the API never hands it back to fill in).
      credentials: {
        clientId: draft.clientId.trim(),
        ...(draft.clientSecret === "" ? {} : { clientSecret: draft.clientSecret }),
        ...(draft.refreshToken === "" ? {} : { refreshToken: draft.refreshToken }),
      },
      conversionActions: actionsOf(draft.actions) as GoogleAdsBody["conversionActions"],
      // PUT replaces the whole record: the stored consent is sent back unless changed here.
      consent: consentOf(draft.consent),
      enabled: draft.enabled,
    });
  };

  const text = (key: "accountId" | "loginAccountId" | "clientId", label: string, path: string, hint: ReactNode) => (
    <Field label={label} error={fieldError(save.error, path)} hint={hint}>
      {(props) => (
        <input
          {...props}
          name={key}
          autoComplete="off"
          spellCheck={false}
          value={draft[key]}
          onChange={(e) => set(key, e.target.value)}
        />
      )}
    </Field>
  );
  const secret = (key: "clientSecret" | "refreshToken", label: string) => (
    <Field
      label={label}
      error={fieldError(save.error, `credentials.${key}`)}
      hint={
        record ? "Stored and never shown: leave empty to keep it, or type a new one." : "Write-only: never shown again."
      }
    >
      {(props) => (
        <input
          {...props}
          name={key}
          type="password"
          autoComplete="new-password"
          spellCheck={false}
          value={draft[key]}
          onChange={(e) => set(key, e.target.value)}
        />
      )}
    </Field>
  );

  return (
    <form className="form-panel webhook-form" onSubmit={submit} noValidate aria-label="Google Ads integration">
      <h2>{record ? "Change the integration" : "Set up Google Ads"}</h2>
      {text(
        "accountId",
        "Customer account id",
        "accountId",
        "The Google Ads account that receives the conversions: 123-456-7890 or 1234567890.",
      )}
      {text(
        "loginAccountId",
        "Login account id",
        "loginAccountId",
        "Optional: the manager account the credentials sign in as, when it is not the customer account.",
      )}
      {text("clientId", "OAuth client id", "credentials.clientId", "The OAuth client the refresh token was issued to.")}
      {secret("clientSecret", "OAuth client secret")}
      {secret("refreshToken", "Refresh token")}
      <fieldset className="choices action-fields">
        <legend>Conversion actions (the action id for each type; empty: not uploaded)</legend>
        {REPORTED_TYPES.map((type) => (
          <Field
            key={type}
            label={conversionTypeLabel(type)}
            error={fieldError(save.error, `conversionActions.${type}`)}
          >
            {(props) => (
              <input
                {...props}
                name={`action-${type}`}
                autoComplete="off"
                className="short-input"
                value={draft.actions[type] ?? ""}
                onChange={(e) => set("actions", { ...draft.actions, [type]: e.target.value })}
              />
            )}
          </Field>
        ))}
        {fieldError(save.error, "conversionActions") &&
          !REPORTED_TYPES.some((type) => fieldError(save.error, `conversionActions.${type}`)) && (
            <p className="field-error" role="alert">
              {fieldError(save.error, "conversionActions")}
            </p>
          )}
      </fieldset>
      <fieldset className="choices action-fields">
        <legend>Consent sent with every upload</legend>
        {CONSENTS.map((key) => (
          <Field key={key} label={CONSENT_NAME[key]} error={fieldError(save.error, `consent.${key}`)}>
            {(props) => (
              <select
                {...props}
                value={draft.consent[key]}
                onChange={(e) => set("consent", { ...draft.consent, [key]: e.target.value as ConsentValue })}
              >
                <option value="">Not sent</option>
                <option value="CONSENT_GRANTED">Granted</option>
                <option value="CONSENT_DENIED">Denied</option>
              </select>
            )}
          </Field>
        ))}
      </fieldset>
      <div className="field">
        <label className="check">
          <input type="checkbox" checked={draft.enabled} onChange={(e) => set("enabled", e.target.checked)} /> Enabled:
          upload new conversions
        </label>
      </div>
      <FormError message={formError(save.error, FIELDS)} />
      <p className="actions">
        <button type="submit" className="button primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Save integration"}
        </button>
      </p>
    </form>
  );
}
