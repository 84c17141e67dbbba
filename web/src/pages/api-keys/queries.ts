import { api, unwrap } from "../../api/client";

/** One page of the key list: as many as a person scans at once. */
export const PAGE_SIZE = 20;

/** Every query of this area starts with it, so a change refreshes them all. */
export const KEYS = ["api-tokens"] as const;

export const keysQuery = (offset: number) => ({
  queryKey: [...KEYS, "list", offset],
  queryFn: async () => {
    const answer = await unwrap(api.GET("/api/v1/api-tokens", { params: { query: { offset, limit: PAGE_SIZE } } }));
    return { items: answer.data, page: answer.pagination };
  },
});

export const scopesQuery = {
  queryKey: [...KEYS, "scopes"],
  queryFn: async () => (await unwrap(api.GET("/api/v1/api-tokens/scopes"))).data,
  staleTime: 5 * 60_000,
};
