import { Link } from "@tanstack/react-router";
import type { ReactNode } from "react";
import "./webhooks.css";

const TONE: Record<string, string> = {
  Enabled: "ok",
  Delivered: "ok",
  Disabled: "neutral",
  Cancelled: "neutral",
  Queued: "info",
  Retrying: "warning",
  Held: "warning",
  Paused: "warning",
  Suspended: "error",
  Failed: "error",
};

/** A webhook's or an event's status, coloured by what it asks of the person. */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge status-${TONE[status] ?? "neutral"}`}>{status}</span>;
}

/** The two views of this area, as tabs a keyboard reaches like any link. */
export function WebhookTabs({ current }: { current: "settings" | "deliveries" }) {
  return (
    <nav className="webhook-tabs" aria-label="Outgoing webhooks">
      <Link
        to="/webhooks"
        activeOptions={{ exact: true, includeSearch: false }}
        aria-current={current === "settings" ? "page" : undefined}
      >
        Webhooks
      </Link>
      <Link to="/webhooks/deliveries" aria-current={current === "deliveries" ? "page" : undefined}>
        Delivery log
      </Link>
    </nav>
  );
}

/** A message the API answered after an action, announced politely; tone error for a refusal. */
/** What an action answered, for ActionResult. */
export type Result = { tone: "ok" | "error"; text: ReactNode } | null;

export function ActionResult({ result }: { result: Result }) {
  return (
    <div role="status" aria-live="polite" className="action-result">
      {result && <p className={result.tone === "error" ? "notice error" : "notice"}>{result.text}</p>}
    </div>
  );
}
