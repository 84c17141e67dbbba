/** PostgreSQL's unique_violation, which PGlite reports with the same code and constraint name. */
const UNIQUE_VIOLATION = "23505";

/**
 * Whether a statement failed on a unique index (that one, when `constraint` is given): the
 * index is what holds a name unique under concurrent writers, so a caller turns this into its
 * 409 rather than checking first.
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, constraint: failed } = error as { code?: unknown; constraint?: unknown };
  return code === UNIQUE_VIOLATION && (constraint === undefined || failed === constraint);
}
