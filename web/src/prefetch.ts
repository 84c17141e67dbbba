/**
 * What route loaders start their page's queries with (docs/dashboard.md, "Data"). A loader starts
 * them and returns at once: the page shows its own loading state as before, and a refusal is the
 * page's to show (its error state, with a retry), never the router's, so nothing here throws.
 */
import type { QueryClient } from "@tanstack/react-query";
import { meQuery } from "./me";

/**
 * Whether the signed-in person holds `permission` (or one of several), once /me answers (cached
 * for minutes); false if it fails.
 */
export async function holds(queryClient: QueryClient, permission: string | readonly string[]): Promise<boolean> {
  const wanted: readonly string[] = typeof permission === "string" ? [permission] : permission;
  try {
    const held = (await queryClient.ensureQueryData(meQuery)).permissions;
    return wanted.some((p) => held.includes(p));
  } catch {
    return false;
  }
}

/**
 * Runs `start` (a prefetch) once /me says the person holds `permission`, as the page asks only
 * then: a loader never provokes a refusal the page itself would not.
 */
export function prefetchIfAllowed(
  queryClient: QueryClient,
  permission: string | readonly string[],
  start: () => Promise<unknown>,
): void {
  void holds(queryClient, permission).then((allowed) => (allowed ? start() : undefined));
}
