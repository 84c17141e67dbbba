/**
 * A request or response body as a person reads it: JSON indented, anything else as sent. The
 * API keeps at most 4 KB of a body, so a cut-off JSON body is not JSON and is shown as it is.
 */
export function readableBody(body: string): string {
  const text = body.trim();
  if (!(text.startsWith("{") || text.startsWith("["))) return body;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return body;
  }
}
