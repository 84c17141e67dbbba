import { type ReactNode, useId } from "react";
import { ApiFailure } from "../api/client";
import { withLabel } from "./field-message";

/**
 * The API's message for one field of a refused request (`data.errors[].path`), or undefined.
 * Paths are the API's (`name`, `items[0].name`); `path` also matches a nested one under it.
 */
export function fieldError(error: unknown, path: string): string | undefined {
  if (!(error instanceof ApiFailure)) return undefined;
  // Every message for the field: the API reports all of a request's errors at once.
  const messages = error.fieldErrors.filter((e) => claims(path, e.path)).map((e) => e.message);
  return messages.length > 0 ? messages.join("; ") : undefined;
}

const claims = (field: string, path: string) =>
  path === field || path.startsWith(`${field}.`) || path.startsWith(`${field}[`);

/** A refusal no field of the form claims: shown above the buttons. */
export function formError(error: unknown, fields: readonly string[]): string | undefined {
  if (!error) return undefined;
  if (error instanceof ApiFailure) {
    if (error.fieldErrors.length > 0 && error.fieldErrors.every((e) => fields.some((f) => claims(f, e.path))))
      return undefined;
    if (error.status === 403) return `You do not have permission for this: ${error.message}`;
    return error.message;
  }
  return error instanceof Error ? error.message : "Something went wrong.";
}

interface FieldProps {
  label: string;
  /** The control, given the id and description ids it must carry. */
  children: (props: { id: string; "aria-describedby"?: string | undefined; "aria-invalid"?: boolean }) => ReactNode;
  hint?: ReactNode;
  error?: string | undefined;
  inline?: boolean;
}

/** A labelled control with its hint and the API's message for it, tied by id for screen readers. */
export function Field({ label, children, hint, error, inline }: FieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(" ") || undefined;
  return (
    <div className={inline ? "field inline" : "field"}>
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-describedby": describedBy, ...(error ? { "aria-invalid": true } : {}) })}
      {hint && (
        <p id={hintId} className="muted small">
          {hint}
        </p>
      )}
      {error && (
        <p id={errorId} className="field-error" role="alert">
          {withLabel(label, error)}
        </p>
      )}
    </div>
  );
}

/** A form-level refusal, announced. */
export function FormError({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p className="form-error" role="alert">
      {message}
    </p>
  );
}
