/**
 * A LIKE pattern matching names that contain `search` (case-insensitive when compared with
 * lower(name)), with LIKE's wildcards escaped; null when there is nothing to search for.
 * The trigram GIN indexes on lower(name) serve these patterns.
 */
export function containsPattern(search: string | undefined): string | null {
  const term = search?.trim().toLowerCase();
  if (!term) return null;
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
