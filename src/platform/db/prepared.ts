/**
 * A statement of a hot path (a conversion's transaction, the checks before it) that PostgreSQL
 * parses and plans once per connection rather than at every call. Measured on one conversion's
 * transaction of about a dozen statements: parsing and planning them took more of its time than
 * running them (the webhook snapshot's join alone, 1-4.5 ms to plan), and with them prepared a
 * single conversion is answered in about half the time. Opt in, not every statement: each
 * prepared statement keeps a plan in every connection that ran it, so the set must stay the
 * small, fixed one written in code, never a text built per request (a report's query). Name the
 * columns a prepared statement returns rather than `*`: its result may not change shape, and a
 * column added by a newer node's migration would fail an older node's statement until restart.
 * PGlite runs the text as it is.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

/** What `Queryable.query` runs: a text, or a statement prepared once per connection. */
export type Statement = string | PreparedStatement;

const declared = new Map<string, string>();

/**
 * Declares a prepared statement; call it once, at module level, with a name unique in the
 * process (PostgreSQL knows a connection's prepared statements by name).
 */
export function prepared(name: string, text: string): PreparedStatement {
  const earlier = declared.get(name);
  if (earlier !== undefined && earlier !== text) {
    throw new Error(`two prepared statements are named '${name}'`);
  }
  declared.set(name, text);
  return { name, text };
}

export const statementText = (statement: Statement): string =>
  typeof statement === "string" ? statement : statement.text;
