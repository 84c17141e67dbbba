import { api, unwrap } from "../../api/client";
import { type CompositeSearch, compositeQuery } from "./search";

/**
 * Every metrics query of this area starts with it: a new reporting currency or exchange rate asks
 * them again (invalidateReports in currency.ts names it among the money queries).
 */
const COMPOSITES = ["composites"] as const;

/** The accounts' metrics over the address's period, the days read in `zone`. */
export const accountsMetricsQuery = (search: CompositeSearch, zone: string, now: number) => {
  const query = compositeQuery(search, zone, now);
  return {
    queryKey: [...COMPOSITES, "accounts", query],
    queryFn: () => unwrap(api.GET("/api/v1/composites/accounts/metrics", { params: { query } })),
  };
};

/** One account's links' metrics; the account's status filter means nothing on one account's page. */
export const linksMetricsQuery = (search: CompositeSearch, zone: string, now: number, accountId: number) => {
  const { status: _status, ...linkSearch } = search;
  const query = { ...compositeQuery(linkSearch, zone, now), accountId };
  return {
    queryKey: [...COMPOSITES, "links", query],
    queryFn: () => unwrap(api.GET("/api/v1/composites/accounts/links/metrics", { params: { query } })),
  };
};

/** The account whose links a page shows (its name, or a 404 for an unknown id). */
export const accountQuery = (id: number) => ({
  queryKey: ["accounts", id],
  queryFn: () => unwrap(api.GET("/api/v1/accounts/{id}", { params: { path: { id } } })),
});

/** An account id as the API has them: a positive integer. */
export const accountIdOf = (raw: string) => (/^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : null);
