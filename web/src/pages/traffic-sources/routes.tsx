import type { QueryClient } from "@tanstack/react-query";
import { createRoute, lazyRouteComponent, notFound } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { catalogId } from "../catalog/search";
import { sourceQuery } from "./queries";
import { parseOffsetSearch, parsePostbackSearch, parseUploadSearch } from "./search";

// A traffic source's integrations: beside its catalog form (/catalog/traffic-sources/{id}), one
// segment deeper, so they never take that form's address. Each page's code loads on first visit.
/** A source id that is no catalog id is no page. */
function checkSource(sourceId: string): void {
  if (catalogId(sourceId) === undefined) throw notFound();
}

/**
 * Every page here shows the source first and what it lists once the source is read: the loader
 * starts that read and returns, and the page shows its loading and error states itself.
 */
function loadSource(queryClient: QueryClient, sourceId: string): void {
  const id = catalogId(sourceId);
  if (id !== undefined) void queryClient.prefetchQuery(sourceQuery(id));
}

/** The postback setting: the click id parameter and where conversions are reported back. */
const sourcePostbackRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/catalog/traffic-sources/$sourceId/postback",
  beforeLoad: ({ params }) => checkSource(params.sourceId),
  loader: ({ context, params }) => loadSource(context.queryClient, params.sourceId),
  component: lazyRouteComponent(() => import("./PostbackSettingPage"), "PostbackSettingPage"),
});

/** The postbacks the source was sent, filtered and paged by the address. */
const sourcePostbacksRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/catalog/traffic-sources/$sourceId/postbacks",
  beforeLoad: ({ params }) => checkSource(params.sourceId),
  loader: ({ context, params }) => loadSource(context.queryClient, params.sourceId),
  validateSearch: parsePostbackSearch,
  component: lazyRouteComponent(() => import("./PostbacksPage"), "PostbacksPage"),
});

/** One postback's attempts, with resend. */
const sourcePostbackAttemptsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/catalog/traffic-sources/$sourceId/postbacks/$postbackId",
  beforeLoad: ({ params }) => checkSource(params.sourceId),
  loader: ({ context, params }) => loadSource(context.queryClient, params.sourceId),
  validateSearch: parseOffsetSearch,
  component: lazyRouteComponent(() => import("./PostbackAttemptsPage"), "PostbackAttemptsPage"),
});

/** The Google Ads integration: account, credentials (write-only), conversion actions. */
const googleAdsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/catalog/traffic-sources/$sourceId/google-ads",
  beforeLoad: ({ params }) => checkSource(params.sourceId),
  loader: ({ context, params }) => loadSource(context.queryClient, params.sourceId),
  component: lazyRouteComponent(() => import("./GoogleAdsPage"), "GoogleAdsPage"),
});

const googleAdsUploadsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/catalog/traffic-sources/$sourceId/google-ads/uploads",
  beforeLoad: ({ params }) => checkSource(params.sourceId),
  loader: ({ context, params }) => loadSource(context.queryClient, params.sourceId),
  validateSearch: parseUploadSearch,
  component: lazyRouteComponent(() => import("./UploadsPage"), "UploadsPage"),
});

const googleAdsUploadRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/catalog/traffic-sources/$sourceId/google-ads/uploads/$uploadId",
  beforeLoad: ({ params }) => checkSource(params.sourceId),
  loader: ({ context, params }) => loadSource(context.queryClient, params.sourceId),
  component: lazyRouteComponent(() => import("./UploadPage"), "UploadPage"),
});

export const trafficSourceRoutes = [
  sourcePostbackRoute,
  sourcePostbacksRoute,
  sourcePostbackAttemptsRoute,
  googleAdsRoute,
  googleAdsUploadsRoute,
  googleAdsUploadRoute,
] as const;
