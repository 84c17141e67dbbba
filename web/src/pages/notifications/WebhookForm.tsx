import { type FormEvent, useState } from "react";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { EVENT_TYPES, type EventType } from "./events";

export interface WebhookValues {
  url: string;
  description: string;
  events: EventType[];
}

const FIELDS = ["url", "description", "events"] as const;

interface WebhookFormProps {
  title: string;
  initial: WebhookValues;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (values: WebhookValues) => void;
  onCancel: () => void;
}

/** The URL, event filter and note of an operational webhook, with the API's message beside each. */
export function WebhookForm({ title, initial, submitLabel, pending, error, onSubmit, onCancel }: WebhookFormProps) {
  const [url, setUrl] = useState(initial.url);
  const [description, setDescription] = useState(initial.description);
  const [events, setEvents] = useState<ReadonlySet<EventType>>(new Set(initial.events));
  const toggle = (type: EventType, on: boolean) => {
    const next = new Set(events);
    if (on) next.add(type);
    else next.delete(type);
    setEvents(next);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    // In the API's order, so an unchanged filter reads the same.
    onSubmit({ url: url.trim(), description, events: EVENT_TYPES.map((e) => e.type).filter((t) => events.has(t)) });
  };
  const eventsError = fieldError(error, "events");

  return (
    <form className="form-panel" onSubmit={submit} noValidate aria-label={title}>
      <h2>{title}</h2>
      <Field
        label="URL"
        hint="https; plain http only to hosts the operator allows. Private addresses are refused."
        error={fieldError(error, "url")}
      >
        {(props) => (
          <input
            {...props}
            type="url"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
            placeholder="https://ops.example.com/hooks"
            autoComplete="off"
            required
          />
        )}
      </Field>
      <Field
        label="Description"
        hint="A note for people, up to 500 characters."
        error={fieldError(error, "description")}
      >
        {(props) => <input {...props} value={description} onChange={(e) => setDescription(e.target.value)} />}
      </Field>
      <fieldset className="event-choice" aria-describedby="events-hint">
        <legend>Events</legend>
        <p id="events-hint" className="muted small">
          None checked: every event, including types added later.
        </p>
        <ul className="event-list">
          {EVENT_TYPES.map(({ type, when }) => (
            <li key={type}>
              <label>
                <input type="checkbox" checked={events.has(type)} onChange={(e) => toggle(type, e.target.checked)} />{" "}
                <code>{type}</code> <span className="muted small">{when}</span>
              </label>
            </li>
          ))}
        </ul>
        {eventsError && (
          <p className="field-error" role="alert">
            {eventsError}
          </p>
        )}
      </fieldset>
      <FormError message={formError(error, FIELDS)} />
      <p className="actions">
        <button type="submit" className="button primary" disabled={pending}>
          {pending ? "Saving…" : submitLabel}
        </button>
        <button type="button" className="button secondary" onClick={onCancel}>
          Cancel
        </button>
      </p>
    </form>
  );
}
