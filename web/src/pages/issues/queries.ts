import { api, unwrap } from "../../api/client";
import { type IssuesSearch, PAGE_SIZE } from "./search";

/** Every query of this area starts with it, so closing an issue refreshes them all. */
export const ISSUES = ["issues"] as const;

/** One page of the issues list, as its address narrows it (GET /api/v1/issues). */
export const issuesQuery = ({ status, kind, offset = 0 }: IssuesSearch) => ({
  queryKey: [...ISSUES, "list", status, kind, offset],
  queryFn: () =>
    unwrap(
      api.GET("/api/v1/issues", {
        params: { query: { limit: PAGE_SIZE, offset, ...(status ? { status } : {}), ...(kind ? { kind } : {}) } },
      }),
    ),
});

export const issueQuery = (id: string) => ({
  queryKey: [...ISSUES, "one", id],
  queryFn: async () => (await unwrap(api.GET("/api/v1/issues/{id}", { params: { path: { id } } }))).data,
});

/** The overview's panel: the open issues, the first ten. */
export const openIssuesQuery = {
  queryKey: [...ISSUES, "open"],
  queryFn: () => unwrap(api.GET("/api/v1/issues", { params: { query: { status: "open", limit: 10 } } })),
};
