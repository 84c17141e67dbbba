/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: the placeholder syntax of webhook URLs is ${name} */

/** The three ways a URL template names a value (docs/outgoing-webhooks.md). */
export const SYNTAXES = [
  { id: "dollar", label: "${name}: URL-encoded", token: (name: string) => `\${${name}}` },
  { id: "braces", label: "{{name}}: URL-encoded", token: (name: string) => `{{${name}}}` },
  {
    id: "raw",
    label: "{{{name}}}: raw, never in the scheme, user info, host or port",
    token: (name: string) => `{{{${name}}}}`,
  },
] as const;
export type SyntaxId = (typeof SYNTAXES)[number]["id"];

export function tokenFor(syntax: SyntaxId, name: string): string {
  return (SYNTAXES.find((s) => s.id === syntax) ?? SYNTAXES[0]).token(name);
}

/** `text` with `token` put in place of the selection [start, end), and where the caret goes after it. */
export function insertToken(text: string, start: number, end: number, token: string): { text: string; caret: number } {
  const from = Math.max(0, Math.min(start, text.length));
  const to = Math.max(from, Math.min(end, text.length));
  return { text: text.slice(0, from) + token + text.slice(to), caret: from + token.length };
}

/**
 * Event names a receiver gets instead of the conversion type, one `Type=name` a line (blank lines
 * skipped). Only the shape is read here; which types are allowed is the API's to say.
 */
export function parseEventNames(text: string): { names: Record<string, string> } | { error: string } {
  const names: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "") continue;
    const at = line.indexOf("=");
    const type = at < 0 ? "" : line.slice(0, at).trim();
    const name = at < 0 ? "" : line.slice(at + 1).trim();
    if (type === "" || name === "")
      return { error: `Line ${index + 1}: write it as Type=event name, e.g. Signup=lead.` };
    if (type in names) return { error: `Line ${index + 1}: ${type} is named twice.` };
    names[type] = name;
  }
  return { names };
}

export function formatEventNames(names: Record<string, string>): string {
  return Object.entries(names)
    .map(([type, name]) => `${type}=${name}`)
    .join("\n");
}
