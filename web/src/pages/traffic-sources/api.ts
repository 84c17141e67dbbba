import { type QueryClient, useQuery } from "@tanstack/react-query";
import { ApiFailure, api, unwrap } from "../../api/client";
import type { paths } from "../../api/schema";
import { CATALOG_KEY } from "../catalog/catalog-api";
import { ATTEMPTS_PAGE_SIZE, PAGE_SIZE, type PostbackSearch, type UploadSearch } from "./search";

const SOURCE = "/api/v1/traffic-sources/{id}";
type Json<P extends keyof paths, M extends "get" | "put" | "patch" | "post", S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { "application/json": infer J } } };
}
  ? J
  : never;

export type TrafficSource = Json<typeof SOURCE, "get", 200>["data"];
export type SourcePatch = paths[typeof SOURCE]["patch"]["requestBody"]["content"]["application/json"];
export type SentPostback = Json<`${typeof SOURCE}/postbacks`, "get", 200>["data"][number];
export type GoogleAds = Json<`${typeof SOURCE}/google-ads`, "get", 200>["data"];
export type GoogleAdsBody = paths[`${typeof SOURCE}/google-ads`]["put"]["requestBody"]["content"]["application/json"];
export type Upload = Json<`${typeof SOURCE}/google-ads/uploads`, "get", 200>["data"][number];
export type UploadDetail = Json<`${typeof SOURCE}/google-ads/uploads/{uploadId}`, "get", 200>["data"];
export type PostbackTest = Json<`${typeof SOURCE}/postback/test`, "post", 200>["data"];
export type ConnectionTest = Json<`${typeof SOURCE}/google-ads/test`, "post", 200>["data"];

/** Query keys, so a change invalidates exactly what it touched. */
const keys = {
  postbacks: (id: number) => ["source-postbacks", id] as const,
  googleAds: (id: number) => ["google-ads", id] as const,
};

/** The source as the catalog reads it (the catalog's key, so its form and lists stay in step). */
export function useSource(id: number) {
  return useQuery({
    queryKey: [...CATALOG_KEY, "traffic-sources", "row", id],
    queryFn: async () => (await unwrap(api.GET(SOURCE, { params: { path: { id } } }))).data,
  });
}

const waiting = new Set(["Queued", "Retrying"]);
const refreshWhile = (on: boolean) => (on ? 2_000 : false);

export function usePostbacks(id: number, search: PostbackSearch) {
  const { offset, ...filters } = search;
  return useQuery({
    queryKey: [...keys.postbacks(id), "list", search],
    queryFn: () =>
      unwrap(
        api.GET(`${SOURCE}/postbacks`, {
          params: { path: { id }, query: { ...filters, offset: offset ?? 0, limit: PAGE_SIZE } },
        }),
      ),
    // The worker sends waiting postbacks on its own: the list follows until none on the page waits.
    refetchInterval: (query) => refreshWhile(query.state.data?.data.some((p) => waiting.has(p.status)) ?? false),
  });
}

/** `until`: after a resend, the attempt count to wait for; the list is asked again until it is reached. */
export function useAttempts(id: number, postbackId: string, offset: number, until: number | null) {
  return useQuery({
    queryKey: [...keys.postbacks(id), "attempts", postbackId, offset],
    queryFn: () =>
      unwrap(
        api.GET(`${SOURCE}/postbacks/{postbackId}/attempts`, {
          params: { path: { id, postbackId }, query: { offset, limit: ATTEMPTS_PAGE_SIZE } },
        }),
      ),
    refetchInterval: (query) => refreshWhile(until !== null && (query.state.data?.pagination.total ?? 0) < until),
  });
}

export function useGoogleAds(id: number) {
  return useQuery({
    queryKey: [...keys.googleAds(id), "setting"],
    // 404 is "not set up" (the source itself is read first): the page offers to set it up.
    queryFn: async (): Promise<GoogleAds | null> => {
      try {
        return (await unwrap(api.GET(`${SOURCE}/google-ads`, { params: { path: { id } } }))).data;
      } catch (error) {
        if (error instanceof ApiFailure && error.status === 404) return null;
        throw error;
      }
    },
  });
}

export function useUploads(id: number, search: UploadSearch) {
  const { offset, ...filters } = search;
  return useQuery({
    queryKey: [...keys.googleAds(id), "uploads", search],
    queryFn: () =>
      unwrap(
        api.GET(`${SOURCE}/google-ads/uploads`, {
          params: { path: { id }, query: { ...filters, offset: offset ?? 0, limit: PAGE_SIZE } },
        }),
      ),
    refetchInterval: (query) => refreshWhile(query.state.data?.data.some((u) => u.status === "Retrying") ?? false),
  });
}

export function useUpload(id: number, uploadId: string) {
  return useQuery({
    queryKey: [...keys.googleAds(id), "upload", uploadId],
    queryFn: async () =>
      (await unwrap(api.GET(`${SOURCE}/google-ads/uploads/{uploadId}`, { params: { path: { id, uploadId } } }))).data,
  });
}

export const sourcesApi = {
  patch: async (id: number, body: SourcePatch) =>
    (await unwrap(api.PATCH(SOURCE, { params: { path: { id } }, body }))).data,
  resend: async (id: number, postbackId: string) =>
    unwrap(api.POST(`${SOURCE}/postbacks/{postbackId}/resend`, { params: { path: { id, postbackId } } })),
  saveGoogleAds: async (id: number, body: GoogleAdsBody) =>
    (await unwrap(api.PUT(`${SOURCE}/google-ads`, { params: { path: { id } }, body }))).data,
  removeGoogleAds: async (id: number) => unwrap(api.DELETE(`${SOURCE}/google-ads`, { params: { path: { id } } })),
  /** Sends a sample conversion to the saved postback URL now (nothing recorded). */
  testPostback: async (id: number): Promise<PostbackTest> =>
    (await unwrap(api.POST(`${SOURCE}/postback/test`, { params: { path: { id } } }))).data,
  /** Tries the saved Google Ads settings: the token exchange and a validate-only ingest. */
  testGoogleAds: async (id: number): Promise<ConnectionTest> =>
    (await unwrap(api.POST(`${SOURCE}/google-ads/test`, { params: { path: { id } } }))).data,
};

export const postbacksChanged = (client: QueryClient, id: number) =>
  client.invalidateQueries({ queryKey: keys.postbacks(id) });
export const googleAdsChanged = (client: QueryClient, id: number) =>
  client.invalidateQueries({ queryKey: keys.googleAds(id) });
