import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ConfirmButton } from "../../components/ConfirmButton";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { today } from "../../dates";
import { formatInteger } from "../../format";
import { eventsChanged, type RangeBody, type Webhook, webhooksApi } from "./api";
import { ActionResult, type Result } from "./parts";
import type { DeliverySearch } from "./search";

const FIELDS = ["dateFrom", "dateTo", "webhookId"] as const;

/**
 * Cancel the waiting events, or delete the events, created in a range of UTC days (optionally one
 * webhook's), after a confirmation; the count shown is the API's answer.
 */
export function RangeActions({ search, webhooks }: { search: DeliverySearch; webhooks: Webhook[] }) {
  const client = useQueryClient();
  const [dateFrom, setDateFrom] = useState(search.dateFrom ?? today());
  const [dateTo, setDateTo] = useState(search.dateTo ?? today());
  const [webhookId, setWebhookId] = useState(search.webhookId ?? "");
  const [result, setResult] = useState<Result>(null);
  const body: RangeBody = { dateFrom, dateTo, ...(webhookId ? { webhookId } : {}) };
  const which = webhookId ? `of ${webhooks.find((w) => w.id === webhookId)?.name ?? webhookId} ` : "";
  const range = dateFrom === dateTo ? `on ${dateFrom}` : `from ${dateFrom} to ${dateTo}`;

  const cancel = useMutation({
    mutationFn: () => webhooksApi.cancelRange(body),
    onSuccess: (answer) =>
      setResult({ tone: "ok", text: `${formatInteger(answer.data.cancelled)} waiting events cancelled.` }),
    onSettled: () => eventsChanged(client),
  });
  const remove = useMutation({
    mutationFn: () => webhooksApi.deleteRange(body),
    onSuccess: (answer) => setResult({ tone: "ok", text: `${formatInteger(answer.data.deleted)} events deleted.` }),
    onSettled: () => eventsChanged(client),
  });
  const error = cancel.error ?? remove.error;
  const ready = dateFrom !== "" && dateTo !== "" && !cancel.isPending && !remove.isPending;

  return (
    <details className="range-details" open={result !== null || error !== null}>
      <summary>Cancel or delete a range of events</summary>
      <section className="form-panel range-panel" aria-labelledby="range-title">
        <h2 id="range-title">Cancel or delete a range</h2>
        <p className="muted small">
          Events created on these UTC days. Cancelling stops those still waiting to be sent.
        </p>
        <div className="toolbar">
          <Field label="Created from" error={fieldError(error, "dateFrom")}>
            {(props) => (
              <input {...props} type="date" required value={dateFrom} onChange={(e) => setDateFrom(e.target.value)} />
            )}
          </Field>
          <Field label="Created to" error={fieldError(error, "dateTo")}>
            {(props) => (
              <input {...props} type="date" required value={dateTo} onChange={(e) => setDateTo(e.target.value)} />
            )}
          </Field>
          <Field label="Of webhook" error={fieldError(error, "webhookId")}>
            {(props) => (
              <select {...props} value={webhookId} onChange={(e) => setWebhookId(e.target.value)}>
                <option value="">Every webhook</option>
                {webhooks.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <FormError message={formError(error, FIELDS)} />
        <p className="actions">
          <ConfirmButton
            label="Cancel waiting events"
            disabled={!ready}
            question={`Cancel the waiting events ${which}created ${range}? They will not be sent.`}
            onConfirm={() => {
              setResult(null);
              remove.reset();
              cancel.mutate();
            }}
          />
          <ConfirmButton
            label="Delete events"
            danger
            disabled={!ready}
            question={`Delete the events ${which}created ${range}, with their attempts? This cannot be undone.`}
            onConfirm={() => {
              setResult(null);
              cancel.reset();
              remove.mutate();
            }}
          />
        </p>
        <ActionResult result={result} />
      </section>
    </details>
  );
}
