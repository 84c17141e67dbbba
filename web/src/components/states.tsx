import type { ReactNode } from "react";
import { ApiFailure } from "../api/client";

export function Loading({ label }: { label: string }) {
  return (
    <p className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state state-empty">{children}</p>;
}

/** What went wrong, in the API's words when it answered; a 403 says what is missing. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiFailure) {
    if (error.status === 403) return `You do not have permission for this: ${error.message}`;
    return error.message;
  }
  return error instanceof Error ? error.message : "Something went wrong.";
}

export function ErrorState({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  return (
    <div className="state state-error" role="alert">
      <p>{messageOf(error)}</p>
      {onRetry && (
        <button type="button" className="button secondary" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}
