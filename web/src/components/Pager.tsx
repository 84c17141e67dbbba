import { formatInteger } from "../format";

export interface Page {
  offset: number;
  limit: number;
  total: number;
}

/** Previous and next over an offset-paged list (the API's `pagination`), with where we are. */
export function Pager({ page, onOffset, label }: { page: Page; onOffset: (offset: number) => void; label: string }) {
  if (page.total === 0) return null;
  const first = page.offset + 1;
  const last = Math.min(page.offset + page.limit, page.total);
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button
        type="button"
        className="button secondary"
        disabled={page.offset === 0}
        onClick={() => onOffset(Math.max(0, page.offset - page.limit))}
      >
        Previous
      </button>
      <span className="muted" aria-live="polite">
        {formatInteger(first)}–{formatInteger(last)} of {formatInteger(page.total)}
      </span>
      <button
        type="button"
        className="button secondary"
        disabled={last >= page.total}
        onClick={() => onOffset(page.offset + page.limit)}
      >
        Next
      </button>
    </nav>
  );
}
