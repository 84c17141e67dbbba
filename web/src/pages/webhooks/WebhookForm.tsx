import { useQuery } from "@tanstack/react-query";
import { type FormEvent, useId, useMemo, useState } from "react";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { SearchPicker } from "../../components/SearchPicker";
import { conversionTypeLabel } from "../../vocabulary";
import { catalogPicker } from "../catalog/picker-sources";
import { settingsQuery } from "../settings/queries";
import type { AttributionSource, ConversionType, NewWebhook, Webhook } from "./api";
import { formatEventNames, parseEventNames } from "./template";
import { UrlField } from "./UrlField";

// Commission types never fire a postback, so they are not offered; Click only with click webhooks on.
const TYPES: ConversionType[] = ["Click", "Signup", "FirstTimeDeposit", "Qualifier", "Deposit"];
const SOURCES: AttributionSource[] = ["google", "meta", "microsoft", "outbrain", "direct"];
const FIELDS = [
  "name",
  "url",
  "method",
  "trafficSourceId",
  "conversionTypes",
  "eventNames",
  "attributionSources",
  "statusChanges",
  "status",
] as const;

export interface WebhookDraft {
  name: string;
  url: string;
  method: "GET" | "POST";
  /** "" is affiliate-level: every conversion. */
  trafficSourceId: string;
  conversionTypes: ConversionType[];
  attributionSources: AttributionSource[];
  eventNames: string;
  /** Send each change of a conversion's status as one more delivery. */
  statusChanges: boolean;
  status: Webhook["status"];
}

export const emptyDraft: WebhookDraft = {
  name: "",
  url: "",
  method: "GET",
  trafficSourceId: "",
  conversionTypes: [],
  attributionSources: [],
  eventNames: "",
  statusChanges: false,
  status: "Enabled",
};

export function draftOf(webhook: Webhook): WebhookDraft {
  return {
    name: webhook.name,
    url: webhook.url,
    method: webhook.method,
    trafficSourceId: webhook.trafficSourceId === null ? "" : String(webhook.trafficSourceId),
    conversionTypes: webhook.conversionTypes as ConversionType[],
    attributionSources: webhook.attributionSources as AttributionSource[],
    eventNames: formatEventNames(webhook.eventNames),
    statusChanges: webhook.statusChanges,
    status: webhook.status,
  };
}

const toggle = <T,>(list: T[], value: T, on: boolean) => (on ? [...list, value] : list.filter((v) => v !== value));

/**
 * A webhook's settings, for a new one or a change. `onSave` gets the body the API takes (status
 * only when the person changed it); the API's refusal shows next to its field.
 */
export function WebhookForm({
  initial,
  submitLabel,
  saving,
  error,
  onSave,
}: {
  initial: WebhookDraft;
  submitLabel: string;
  saving: boolean;
  error: unknown;
  onSave: (body: NewWebhook) => void;
}) {
  const [draft, setDraft] = useState(initial);
  const [namesError, setNamesError] = useState<string>();
  // The URL the last save sent: the API's refusal of it stands until the person changes it.
  const [sentUrl, setSentUrl] = useState<string>();
  const sources = useMemo(() => catalogPicker("traffic-sources"), []);
  // Whether Click postbacks are on for the tenant (its entitlements, GET /settings).
  const settings = useQuery(settingsQuery);
  const set = <K extends keyof WebhookDraft>(key: K, value: WebhookDraft[K]) =>
    setDraft((d) => ({ ...d, [key]: value }));
  const clickOn = settings.data?.entitlements.clickWebhooks === true || draft.conversionTypes.includes("Click");
  const offeredTypes = TYPES.filter((t) => t !== "Click" || clickOn);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const names = parseEventNames(draft.eventNames);
    if ("error" in names) {
      setNamesError(names.error);
      return;
    }
    setNamesError(undefined);
    setSentUrl(draft.url);
    onSave({
      name: draft.name.trim(),
      url: draft.url.trim(),
      method: draft.method,
      trafficSourceId: draft.trafficSourceId === "" ? null : Number(draft.trafficSourceId),
      conversionTypes: draft.conversionTypes,
      attributionSources: draft.attributionSources,
      eventNames: names.names,
      statusChanges: draft.statusChanges,
      ...(draft.status !== initial.status && draft.status !== "Suspended" ? { status: draft.status } : {}),
    });
  };

  return (
    <form className="form-panel webhook-form" onSubmit={submit} noValidate>
      <Field label="Name" error={fieldError(error, "name")}>
        {(props) => (
          <input
            {...props}
            name="name"
            required
            maxLength={200}
            value={draft.name}
            onChange={(e) => set("name", e.target.value)}
          />
        )}
      </Field>
      <UrlField
        value={draft.url}
        onChange={(url) => set("url", url)}
        saveError={draft.url === sentUrl ? fieldError(error, "url") : undefined}
      />
      <Field
        label="Method"
        error={fieldError(error, "method")}
        hint="GET sends no body; POST sends the conversion as JSON."
      >
        {(props) => (
          <select {...props} value={draft.method} onChange={(e) => set("method", e.target.value as "GET" | "POST")}>
            <option>GET</option>
            <option>POST</option>
          </select>
        )}
      </Field>
      <SearchPicker
        label="Fires for"
        source={sources}
        value={draft.trafficSourceId === "" ? undefined : Number(draft.trafficSourceId)}
        onChange={(id) => set("trafficSourceId", id === undefined ? "" : String(id))}
        none="Every conversion (affiliate-level)"
        error={fieldError(error, "trafficSourceId")}
        hint="Affiliate-level webhooks get every conversion; a source's webhook only that source's. Type to find a traffic source."
      />
      <fieldset className="choices">
        <legend>Conversion types (none checked: every type)</legend>
        {offeredTypes.map((type) => (
          <label key={type}>
            <input
              type="checkbox"
              checked={draft.conversionTypes.includes(type)}
              onChange={(e) => set("conversionTypes", toggle(draft.conversionTypes, type, e.target.checked))}
            />
            {conversionTypeLabel(type)}
          </label>
        ))}
        {fieldError(error, "conversionTypes") && (
          <p className="field-error" role="alert">
            {fieldError(error, "conversionTypes")}
          </p>
        )}
      </fieldset>
      <fieldset className="choices">
        <legend>Attribution sources (none checked: all)</legend>
        {SOURCES.map((source) => (
          <label key={source}>
            <input
              type="checkbox"
              checked={draft.attributionSources.includes(source)}
              onChange={(e) => set("attributionSources", toggle(draft.attributionSources, source, e.target.checked))}
            />
            {source}
          </label>
        ))}
        {fieldError(error, "attributionSources") && (
          <p className="field-error" role="alert">
            {fieldError(error, "attributionSources")}
          </p>
        )}
      </fieldset>
      <Field
        label="Event names"
        error={namesError ?? fieldError(error, "eventNames")}
        hint="Optional: the name this receiver gets instead of the type, one Type=name a line (Signup=lead)."
      >
        {(props) => (
          <textarea {...props} rows={3} value={draft.eventNames} onChange={(e) => set("eventNames", e.target.value)} />
        )}
      </Field>
      <StatusChangesCheck
        checked={draft.statusChanges}
        onChange={(on) => set("statusChanges", on)}
        error={fieldError(error, "statusChanges")}
      />
      <Field
        label="Status"
        error={fieldError(error, "status")}
        hint={
          draft.status === "Suspended"
            ? "Suspended by the service after failures: enable it to send its paused events."
            : "A disabled webhook creates no delivery events."
        }
      >
        {(props) => (
          <select
            {...props}
            value={draft.status}
            onChange={(e) => set("status", e.target.value as WebhookDraft["status"])}
          >
            {initial.status === "Suspended" && <option value="Suspended">Suspended</option>}
            <option>Enabled</option>
            <option>Disabled</option>
          </select>
        )}
      </Field>
      <FormError message={formError(error, FIELDS)} />
      <p className="actions">
        <button type="submit" className="button primary" disabled={saving}>
          {saving ? "Saving…" : submitLabel}
        </button>
      </p>
    </form>
  );
}

/**
 * "Send status changes" (`statusChanges`), with what it means: for the outgoing webhooks and the
 * traffic sources' postbacks alike.
 */
export function StatusChangesCheck({
  checked,
  onChange,
  error,
}: {
  checked: boolean;
  onChange: (on: boolean) => void;
  error: string | undefined;
}) {
  const id = useId();
  return (
    <div className="field status-changes">
      <label className="check">
        <input
          type="checkbox"
          name="statusChanges"
          checked={checked}
          aria-describedby={`${id}-hint${error ? ` ${id}-error` : ""}`}
          onChange={(e) => onChange(e.target.checked)}
        />
        Send status changes
      </label>
      <p id={`${id}-hint`} className="muted small">
        Sends a conversion again each time its status changes, with the new status. Off: each conversion is sent once,
        and none recorded as rejected or reversed.
      </p>
      {error && (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
