import type { QueryClient } from "@tanstack/react-query";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "./api/client";
import { meQuery, useMe } from "./me";
import { settingsQuery } from "./pages/settings/queries";
import { UTC } from "./time-zones";

export interface AccountTimeZone {
  /** The account's zone (the `timeZone` setting); undefined when it cannot be known. */
  zone: string | undefined;
  /** False while it is being asked: a page waits, rather than ask for its figures in another zone. */
  settled: boolean;
}

// One day long past: a report of it reads next to nothing, and its answer names the zone.
const PROBE = { stats: "clicks", conversionDateFrom: "2000-01-01", conversionDateTo: "2000-01-01" } as const;

/** The account's zone as a report's answer names it: for those who read reports but not /settings. */
export const accountTimeZoneProbeQuery = {
  queryKey: ["account-time-zone"],
  queryFn: async () =>
    (await unwrap(api.GET("/api/v1/reports/events/performance", { params: { query: PROBE } }))).meta.timeZone,
  staleTime: 5 * 60_000,
};

/**
 * The zone reports read days in unless a page picks another. GET /settings is for account admins;
 * whoever else reads reports learns it from a report's answer (`meta.timeZone`), asked once.
 */
export function useAccountTimeZone(): AccountTimeZone {
  const me = useMe();
  const permissions = me.data?.permissions ?? [];
  const admin = permissions.includes("account.admin");
  const reader = permissions.includes("reports.read");
  const settings = useQuery({ ...settingsQuery, enabled: admin });
  const probing = reader && (!admin || settings.isError);
  const probe = useQuery({ ...accountTimeZoneProbeQuery, enabled: probing });
  if (admin && settings.isSuccess) return { zone: settings.data.timeZone, settled: true };
  if (probing && probe.isSuccess) return { zone: probe.data, settled: true };
  const asking = me.isPending || (admin && settings.isPending) || (probing && probe.isPending);
  return { zone: undefined, settled: !asking };
}

/**
 * The zone useAccountTimeZone settles on, asked the same way through the same queries, for a route
 * loader that starts a page's queries before the page renders. Never throws: undefined when it
 * cannot be known, as the hook's.
 */
export async function loadAccountTimeZone(queryClient: QueryClient): Promise<string | undefined> {
  const me = await queryClient.ensureQueryData(meQuery).catch(() => undefined);
  const permissions: string[] = me?.permissions ?? [];
  if (permissions.includes("account.admin")) {
    const settings = await queryClient.ensureQueryData(settingsQuery).catch(() => undefined);
    if (settings) return settings.timeZone;
  }
  if (!permissions.includes("reports.read")) return undefined;
  return queryClient.ensureQueryData(accountTimeZoneProbeQuery).catch(() => undefined);
}

/** The zone of a page that may pick one (`chosen`, from its address), for a loader; see useReportZone. */
export async function loadReportZone(queryClient: QueryClient, chosen: string | undefined): Promise<string> {
  return chosen ?? (await loadAccountTimeZone(queryClient)) ?? UTC;
}

export interface ReportZone {
  /** The zone a page asks its figures in: the one in its address, else the account's, else UTC. */
  zone: string;
  accountZone: string | undefined;
  /** Whether the zone is known: a page's queries wait for it. */
  ready: boolean;
}

/** The zone of a page that may pick one (`chosen`, from its address) over the account's. */
export function useReportZone(chosen: string | undefined): ReportZone {
  const account = useAccountTimeZone();
  return {
    zone: chosen ?? account.zone ?? UTC,
    accountZone: account.zone,
    ready: chosen !== undefined || account.settled,
  };
}
