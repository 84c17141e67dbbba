import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "./api/client";

/** The signed-in person and their permissions (GET /api/v1/me): what the pages may offer. */
export const meQuery = {
  queryKey: ["me"],
  queryFn: async () => (await unwrap(api.GET("/api/v1/me"))).data,
  staleTime: 5 * 60_000,
};

export function useMe() {
  return useQuery(meQuery);
}
