import { useMe } from "./me";

/**
 * Whether the signed-in person holds `permission` (GET /api/v1/me lists the effective ones):
 * a page offers only the actions it allows. Until /me answers, nothing is offered.
 */
export function useCan(): (permission: string) => boolean {
  const me = useMe();
  const held = new Set<string>(me.data?.permissions ?? []);
  return (permission) => held.has(permission);
}
