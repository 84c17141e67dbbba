import { CopyButton } from "./CopyButton";

/**
 * A secret the API hands out once (a new API key, a signing secret): shown with a copy button
 * and a warning, never fetched again. The parent forgets it when the person dismisses it.
 */
export function SecretOnce({ title, value, onDone }: { title: string; value: string; onDone: () => void }) {
  return (
    <section className="secret-once" aria-labelledby="secret-once-title">
      <h2 id="secret-once-title">{title}</h2>
      <p className="warning">Copy it now: it is shown only this once and cannot be read again.</p>
      <p className="secret-value">
        <code data-testid="secret-value">{value}</code>
      </p>
      <p className="actions">
        <CopyButton value={value} />
        <button type="button" className="button primary" onClick={onDone}>
          I have copied it
        </button>
      </p>
    </section>
  );
}
