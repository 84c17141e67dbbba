import { isOneOf, positiveIntParam } from "../../search-params.js";

/** The issues list's address: which status, which kind, which page. */
export interface IssuesSearch {
  // `undefined` is allowed so a link can drop a parameter from the address.
  status?: "open" | "closed" | undefined;
  kind?: IssueKind | undefined;
  offset?: number | undefined;
}

export const ISSUE_KINDS = [
  "api_token_expiring",
  "outgoing_webhook_failed",
  "webhook_url_invalid",
  "webhook_allowance_exceeded",
  "google_ads_upload_failed",
] as const;
export type IssueKind = (typeof ISSUE_KINDS)[number];

export const PAGE_SIZE = 25;

export function validateIssuesSearch(search: Record<string, unknown>): IssuesSearch {
  const offset = positiveIntParam(search.offset);
  return {
    ...(search.status === "open" || search.status === "closed" ? { status: search.status } : {}),
    ...(isOneOf(ISSUE_KINDS, search.kind) ? { kind: search.kind } : {}),
    ...(offset !== undefined ? { offset } : {}),
  };
}
