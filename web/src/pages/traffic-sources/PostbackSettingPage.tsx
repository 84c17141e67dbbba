import { useMutation, useQueryClient } from "@tanstack/react-query";
import { getRouteApi } from "@tanstack/react-router";
import { type FormEvent, useRef, useState } from "react";
import { ConfirmButton } from "../../components/ConfirmButton";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { useCan } from "../../permissions";
import { conversionTypeLabel } from "../../vocabulary";
import { CATALOG_KEY } from "../catalog/queries";
import { catalogId } from "../catalog/search";
import { ActionResult, type Result } from "../webhooks/parts";
import { insertToken, type SyntaxId, tokenFor } from "../webhooks/template";
import { PlaceholderHelp } from "../webhooks/UrlField";
import { StatusChangesCheck } from "../webhooks/WebhookForm";
import { type SourcePatch, sourcesApi, type TrafficSource } from "./api";
import { PostbackTestButton } from "./IntegrationTests";
import { EDIT_PERMISSION, READ_PERMISSION, SourceFrame } from "./parts";
import { payoutShareOf, REPORTED_TYPES } from "./search";

// The page reaches its route by id: its routes module imports it, never the other way.
const sourcePostbackRoute = getRouteApi("/app/catalog/traffic-sources/$sourceId/postback");

/** The names a source's postback URL has beyond the webhook ones (docs/dashboard.md). */
const SOURCE_PLACEHOLDERS = ["externalId", "payout"] as const;
const FIELDS = ["clickIdParam", "clickIdMacro", "postback"] as const;
type PostbackTypes = NonNullable<NonNullable<SourcePatch["postback"]>["conversionTypes"]>;

interface Draft {
  clickIdParam: string;
  clickIdMacro: string;
  url: string;
  conversionTypes: string[];
  payoutShare: string;
  enabled: boolean;
  /** Re-fire the postback on each change of a conversion's status. */
  statusChanges: boolean;
}

function draftOf(source: TrafficSource): Draft {
  const postback = source.postback;
  return {
    clickIdParam: source.clickIdParam ?? "",
    clickIdMacro: source.clickIdMacro ?? "",
    url: postback?.url ?? "",
    conversionTypes: [...(postback?.conversionTypes ?? [])],
    payoutShare:
      postback?.payoutShare === null || postback?.payoutShare === undefined ? "" : String(postback.payoutShare),
    enabled: postback?.enabled ?? true,
    statusChanges: postback?.statusChanges ?? false,
  };
}

const toggle = (list: string[], value: string, on: boolean) =>
  on ? [...list, value] : list.filter((v) => v !== value);

/** A traffic source's postback: the parameter carrying its click id, and where conversions are reported. */
export function PostbackSettingPage() {
  const id = catalogId(sourcePostbackRoute.useParams().sourceId) ?? 0;
  // Above the form, which starts afresh from each saved version: the outcome outlives it.
  const [result, setResult] = useState<Result>(null);
  return (
    <SourceFrame id={id} section="postback" title="Postback">
      {(source) => <PostbackForm key={source.updatedAt} source={source} result={result} onResult={setResult} />}
    </SourceFrame>
  );
}

function PostbackForm({
  source,
  result,
  onResult: setResult,
}: {
  source: TrafficSource;
  result: Result;
  onResult: (result: Result) => void;
}) {
  const client = useQueryClient();
  const can = useCan();
  const editable = can(EDIT_PERMISSION);
  const readable = can(READ_PERMISSION);
  const [draft, setDraft] = useState(() => draftOf(source));
  const [syntax, setSyntax] = useState<SyntaxId>("braces");
  const urlInput = useRef<HTMLInputElement>(null);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft((d) => ({ ...d, [key]: value }));

  const save = useMutation({
    mutationFn: (body: SourcePatch) => sourcesApi.patch(source.id, body),
    onSuccess: async (_saved, body) => {
      setResult({ tone: "ok", text: body.postback === null ? "The postback was removed." : "Saved." });
      await client.invalidateQueries({ queryKey: CATALOG_KEY });
    },
    onError: () => setResult(null),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const share = payoutShareOf(draft.payoutShare);
    save.mutate({
      clickIdParam: draft.clickIdParam.trim() === "" ? null : draft.clickIdParam.trim(),
      clickIdMacro: draft.clickIdMacro.trim() === "" ? null : draft.clickIdMacro.trim(),
      postback: {
        url: draft.url.trim(),
        conversionTypes: draft.conversionTypes as PostbackTypes,
        // Text that is no number goes as it is, so the API's message names the field.
        payoutShare: (share === undefined ? draft.payoutShare : share) as number | null,
        enabled: draft.enabled,
        statusChanges: draft.statusChanges,
      },
    });
  };

  const insert = (name: string) => {
    const element = urlInput.current;
    const start = element?.selectionStart ?? draft.url.length;
    const end = element?.selectionEnd ?? draft.url.length;
    const next = insertToken(draft.url, start, end, tokenFor(syntax, name));
    set("url", next.text);
    requestAnimationFrame(() => {
      element?.focus();
      element?.setSelectionRange(next.caret, next.caret);
    });
  };

  const typesError = fieldError(save.error, "postback.conversionTypes");
  return (
    <>
      <p className="muted">
        When a conversion of a click from this source is recorded, the service calls the source's postback URL, so the
        network learns of it. Postbacks are sent and retried like outgoing webhooks; they are listed under Postbacks
        sent.
      </p>
      {!editable && (
        <p className="notice warning" role="status">
          Changing the postback needs the webhooks.update permission, which you do not have.
        </p>
      )}
      {!readable && (
        <p className="notice warning" role="status">
          Seeing the saved postback needs the webhooks.read permission, which you do not have
          {editable ? ": saving replaces it." : "."}
        </p>
      )}
      <ActionResult result={result} />
      <form className="form-panel webhook-form" onSubmit={submit} noValidate aria-label="Postback setting">
        <fieldset className="source-fieldset" disabled={!editable}>
          <Field
            label="Click id parameter"
            error={fieldError(save.error, "clickIdParam")}
            hint={
              <>
                The tracking URL's parameter holding the network's own click id (such as <code>clickid</code>); it is
                stored with the click and sent back as <code>{tokenFor("braces", "externalId")}</code>. Empty: none.
              </>
            }
          >
            {(props) => (
              <input
                {...props}
                name="clickIdParam"
                maxLength={100}
                autoComplete="off"
                spellCheck={false}
                value={draft.clickIdParam}
                onChange={(e) => set("clickIdParam", e.target.value)}
              />
            )}
          </Field>
          <Field
            label="Click id macro"
            error={fieldError(save.error, "clickIdMacro")}
            hint={
              <>
                What the network fills with its click id (such as <code>{"{clickid}"}</code>): the link generator adds
                it to tracking URLs after the click id parameter. Empty: none.
              </>
            }
          >
            {(props) => (
              <input
                {...props}
                name="clickIdMacro"
                maxLength={100}
                autoComplete="off"
                spellCheck={false}
                value={draft.clickIdMacro}
                onChange={(e) => set("clickIdMacro", e.target.value)}
              />
            )}
          </Field>
          <Field
            label="Postback URL"
            error={fieldError(save.error, "postback.url")}
            hint={
              <>
                An absolute http or https address; placeholders fill in each conversion's values, with{" "}
                <code>{tokenFor("braces", "externalId")}</code> the source's click id and{" "}
                <code>{tokenFor("braces", "payout")}</code> the value times the payout share.
              </>
            }
          >
            {(props) => (
              <input
                {...props}
                ref={urlInput}
                type="text"
                name="url"
                maxLength={4096}
                spellCheck={false}
                autoComplete="off"
                value={draft.url}
                onChange={(e) => set("url", e.target.value)}
              />
            )}
          </Field>
          {/* The names come from the webhook API, which needs webhooks.read; the hint names the source's own. */}
          {editable && readable && (
            <PlaceholderHelp syntax={syntax} onSyntax={setSyntax} onInsert={insert} extra={SOURCE_PLACEHOLDERS} />
          )}
          <fieldset className="choices">
            <legend>Conversion types (none checked: every type that sends postbacks)</legend>
            {REPORTED_TYPES.map((type) => (
              <label key={type}>
                <input
                  type="checkbox"
                  checked={draft.conversionTypes.includes(type)}
                  onChange={(e) => set("conversionTypes", toggle(draft.conversionTypes, type, e.target.checked))}
                />
                {conversionTypeLabel(type)}
              </label>
            ))}
            {typesError && (
              <p className="field-error" role="alert">
                {typesError}
              </p>
            )}
          </fieldset>
          <Field
            label="Payout share (%)"
            error={fieldError(save.error, "postback.payoutShare")}
            hint="The percent of the conversion's value sent as payout, 0 to 100. Empty: payout is left empty."
          >
            {(props) => (
              <input
                {...props}
                name="payoutShare"
                inputMode="decimal"
                className="short-input"
                value={draft.payoutShare}
                onChange={(e) => set("payoutShare", e.target.value)}
              />
            )}
          </Field>
          <div className="field">
            <label className="check">
              <input type="checkbox" checked={draft.enabled} onChange={(e) => set("enabled", e.target.checked)} />{" "}
              Enabled: send postbacks for new conversions
            </label>
            {fieldError(save.error, "postback.enabled") && (
              <p className="field-error" role="alert">
                {fieldError(save.error, "postback.enabled")}
              </p>
            )}
          </div>
          <StatusChangesCheck
            checked={draft.statusChanges}
            onChange={(on) => set("statusChanges", on)}
            error={fieldError(save.error, "postback.statusChanges")}
          />
        </fieldset>
        <FormError message={formError(save.error, FIELDS)} />
        {editable && (
          <p className="actions">
            <button type="submit" className="button primary" disabled={save.isPending}>
              {save.isPending ? "Saving…" : "Save postback"}
            </button>
            {source.postback && (
              <ConfirmButton
                label="Remove postback"
                danger
                disabled={save.isPending}
                question="Remove this source's postback? Conversions will no longer be reported to it; postbacks already sent stay listed."
                onConfirm={() => save.mutate({ postback: null })}
              />
            )}
          </p>
        )}
      </form>
      {/* The saved postback is what a test sends: an unsaved edit is not tried. */}
      {editable && source.postback && <PostbackTestButton id={source.id} disabled={save.isPending} />}
    </>
  );
}
