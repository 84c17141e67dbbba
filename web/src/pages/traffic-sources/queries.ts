import { ApiFailure, api, unwrap } from "../../api/client";
import { rowKey } from "../catalog/queries";
import type { GoogleAds } from "./api";
import { ATTEMPTS_PAGE_SIZE, PAGE_SIZE, type PostbackSearch, type UploadSearch } from "./search";

export const SOURCE = "/api/v1/traffic-sources/{id}";

/** Query keys, so a change invalidates exactly what it touched. */
export const keys = {
  postbacks: (id: number) => ["source-postbacks", id] as const,
  googleAds: (id: number) => ["google-ads", id] as const,
};

/** The source as the catalog reads it (the catalog's key, so its form and lists stay in step). */
export const sourceQuery = (id: number) => ({
  queryKey: rowKey("traffic-sources", id),
  queryFn: async () => (await unwrap(api.GET(SOURCE, { params: { path: { id } } }))).data,
});

export const postbacksQuery = (id: number, search: PostbackSearch) => {
  const { offset, ...filters } = search;
  return {
    queryKey: [...keys.postbacks(id), "list", search],
    queryFn: () =>
      unwrap(
        api.GET(`${SOURCE}/postbacks`, {
          params: { path: { id }, query: { ...filters, offset: offset ?? 0, limit: PAGE_SIZE } },
        }),
      ),
  };
};

export const attemptsQuery = (id: number, postbackId: string, offset: number) => ({
  queryKey: [...keys.postbacks(id), "attempts", postbackId, offset],
  queryFn: () =>
    unwrap(
      api.GET(`${SOURCE}/postbacks/{postbackId}/attempts`, {
        params: { path: { id, postbackId }, query: { offset, limit: ATTEMPTS_PAGE_SIZE } },
      }),
    ),
});

export const googleAdsQuery = (id: number) => ({
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

export const uploadsQuery = (id: number, search: UploadSearch) => {
  const { offset, ...filters } = search;
  return {
    queryKey: [...keys.googleAds(id), "uploads", search],
    queryFn: () =>
      unwrap(
        api.GET(`${SOURCE}/google-ads/uploads`, {
          params: { path: { id }, query: { ...filters, offset: offset ?? 0, limit: PAGE_SIZE } },
        }),
      ),
  };
};

export const uploadQuery = (id: number, uploadId: string) => ({
  queryKey: [...keys.googleAds(id), "upload", uploadId],
  queryFn: async () =>
    (await unwrap(api.GET(`${SOURCE}/google-ads/uploads/{uploadId}`, { params: { path: { id, uploadId } } }))).data,
});

/** The worker sends waiting postbacks and retries uploads on its own: a list follows while one on it waits. */
export const refreshWhile = (on: boolean) => (on ? 2_000 : false);
export const WAITING = new Set(["Queued", "Retrying"]);
