import { api, unwrap } from "../../api/client";
import { type ConversionSearch, conversionQuery } from "./search";

/** Every query of this area starts with it, so a status change refreshes the list, the record and its history. */
export const CONVERSIONS = ["conversions"] as const;

/** One page of the list, as its address filters it, the dates read in `zone` when known. */
export const conversionsQuery = (search: ConversionSearch, zone: string | undefined) => {
  const query = conversionQuery(search, zone);
  return {
    queryKey: [...CONVERSIONS, query],
    queryFn: () => unwrap(api.GET("/api/v1/conversions", { params: { query } })),
  };
};

export const conversionRecordQuery = (id: string) => ({
  queryKey: [...CONVERSIONS, "one", id],
  queryFn: async () => (await unwrap(api.GET("/api/v1/conversions/{id}", { params: { path: { id } } }))).data,
});

/** Its status history, oldest first: the recording, then each change. */
export const conversionHistoryQuery = (id: string) => ({
  queryKey: [...CONVERSIONS, "history", id],
  queryFn: async () => (await unwrap(api.GET("/api/v1/conversions/{id}/history", { params: { path: { id } } }))).data,
});
