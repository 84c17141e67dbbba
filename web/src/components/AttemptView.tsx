import { formatDateTime, formatInteger } from "../format";
import { readableBody } from "./attempt-body";
import "./AttemptView.css";

/** What an attempt view shows: a webhook delivery's attempt and a traffic source postback's have this shape. */
export interface ShownAttempt {
  id: string;
  attempt: number;
  at: string;
  durationMs: number;
  method: string;
  urlTemplate: string;
  error: string | null;
  errorType: string | null;
  request: { headers: Record<string, string>; body: string | null };
  response: { status: number; headers: Record<string, string>; body: string } | null;
}

function Headers({ headers, label }: { headers: Record<string, string>; label: string }) {
  const entries = Object.entries(headers);
  if (entries.length === 0) return <p className="muted small">No headers.</p>;
  return (
    <table className="headers">
      <caption className="visually-hidden">{label}</caption>
      <tbody>
        {entries.map(([name, value]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One attempt: the request sent and the answer got (also a traffic source postback's, of the same shape). */
export function AttemptView({ attempt }: { attempt: ShownAttempt }) {
  const outcome = attempt.response
    ? `HTTP ${attempt.response.status}`
    : (attempt.errorType ?? "no answer").replace(/_/g, " ");
  const ok = attempt.response !== null && attempt.response.status >= 200 && attempt.response.status < 300;
  return (
    <article className="panel attempt" aria-labelledby={`attempt-${attempt.id}`}>
      <h3 id={`attempt-${attempt.id}`}>
        Attempt {attempt.attempt}: <span className={`badge ${ok ? "status-ok" : "status-error"}`}>{outcome}</span>
        <span className="muted small">
          {formatDateTime(attempt.at)}, {formatInteger(attempt.durationMs)} ms
        </span>
      </h3>
      {attempt.error && <p className="notice error">{attempt.error}</p>}
      <div className="exchange">
        <div>
          <h4>Request</h4>
          <p className="small">
            <code>{attempt.method}</code> <code className="url-text">{attempt.urlTemplate}</code>
          </p>
          <p className="muted small">The URL template; the address it rendered to is not stored.</p>
          <Headers headers={attempt.request.headers} label={`Request headers of attempt ${attempt.attempt}`} />
          {attempt.request.body === null ? (
            <p className="muted small">No body.</p>
          ) : (
            <>
              <p className="small">Body</p>
              <pre className="request-body">{readableBody(attempt.request.body)}</pre>
            </>
          )}
        </div>
        <div>
          <h4>Response</h4>
          {attempt.response ? (
            <>
              <p className="small">Status {attempt.response.status}</p>
              <Headers headers={attempt.response.headers} label={`Response headers of attempt ${attempt.attempt}`} />
              {attempt.response.body === "" ? (
                <p className="muted small">Empty body.</p>
              ) : (
                <>
                  <p className="small">Body</p>
                  <pre className="response-body">{readableBody(attempt.response.body)}</pre>
                </>
              )}
            </>
          ) : (
            <p className="muted small">No answer was received.</p>
          )}
        </div>
      </div>
    </article>
  );
}
