import type { QueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import type { paths } from "../../api/schema";
import { keys, SOURCE } from "./queries";

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
