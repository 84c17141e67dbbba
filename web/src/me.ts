import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "./api/client";
import { session } from "./session";

/** The signed-in person and their permissions (GET /api/v1/me): what the pages may offer. */
export const meQuery = {
  queryKey: ["me"],
  queryFn: async () => (await unwrap(api.GET("/api/v1/me"))).data,
  staleTime: 5 * 60_000,
};

export function useMe() {
  // Signed out, the shell still on screen while it gives way to the sign-in page (the cache just
  // cleared): there is no one to ask about, and asking would only earn a 401.
  return useQuery({ ...meQuery, enabled: session.token() !== null });
}
