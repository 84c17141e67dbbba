import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Clock } from "../../platform/clock.js";
import { MINUTE_MS } from "../../platform/durations.js";
import { newId } from "../../platform/ids.js";
import { clickFacts } from "../click-facts/index.js";
import { meterNotRecordedClick, type UsageMeter } from "../usage/index.js";
import type { CachedLink, Found } from "./cache.js";
import type { Click } from "./click-writer.js";
import { parseTrackerValue } from "./tracker-value.js";
import type { Tracking } from "./tracking.js";

const ClickParams = Type.Object({
  brandLinkId: Type.String({ description: "Brand link id" }),
  trafficSourceId: Type.String({ description: "Traffic source id" }),
});

const DIGITS = /^[1-9][0-9]{0,15}$/;
// Every utm_ parameter is kept (utm_id, utm_adgroup and the like besides the five usual ones),
// bounded so a crafted link cannot make a click row arbitrarily large.
const UTM_PREFIX = "utm_";
const MAX_UTM_KEYS = 20;
const MAX_UTM_KEY = 64;
// Headers a CDN or load balancer in front of the service sets to the visitor's country.
const COUNTRY_HEADERS = ["cf-ipcountry", "cloudfront-viewer-country", "x-vercel-ip-country", "x-country-code"];
const MAX_PARAM = 500;

const NOT_FOUND_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Link not found</title></head>
<body><h1>Link not found</h1><p>This tracking link does not exist or is no longer active.</p></body></html>
`;

type Query = Record<string, string | string[] | undefined>;

/** A value fit for a text column: bounded, and without NUL, which PostgreSQL refuses. */
function clean(value: string | undefined, max: number): string | null {
  if (value === undefined || value === "") return null;
  const bounded = value.length > max ? value.slice(0, max) : value;
  return bounded.includes("\u0000") ? bounded.replaceAll("\u0000", "") || null : bounded;
}

function param(query: Query, name: string, max = MAX_PARAM): string | null {
  const raw = query[name];
  return clean(Array.isArray(raw) ? raw[0] : raw, max);
}

function header(request: FastifyRequest, name: string, max: number): string | null {
  const value = request.headers[name];
  return typeof value === "string" ? clean(value, max) : null;
}

function countryOf(request: FastifyRequest): string | null {
  for (const name of COUNTRY_HEADERS) {
    const value = request.headers[name];
    // XX and T1 are the CDNs' "unknown" and "Tor".
    if (typeof value === "string" && /^[A-Za-z]{2}$/.test(value) && !/^(xx|t1)$/i.test(value)) {
      return value.toUpperCase();
    }
  }
  return null;
}

function utmOf(query: Query): Record<string, string> | null {
  let utm: Record<string, string> | null = null;
  let kept = 0;
  for (const key of Object.keys(query)) {
    if (kept === MAX_UTM_KEYS) break;
    const name = key.toLowerCase().startsWith(UTM_PREFIX) ? clean(key.slice(UTM_PREFIX.length), MAX_UTM_KEY) : null;
    const value = name === null ? null : param(query, key);
    if (name !== null && value !== null) {
      utm ??= {};
      utm[name] = value;
      kept += 1;
    }
  }
  return utm;
}

function clickOf(
  request: FastifyRequest,
  ip: string,
  link: CachedLink,
  sourceId: number,
  clickIdParam: string | null,
  at: Date,
): Click {
  const query = request.query as Query;
  const tracker = parseTrackerValue(param(query, "tracker", 100));
  const userAgent = header(request, "user-agent", 1000);
  const facts = clickFacts({
    ip,
    userAgent,
    hints: {
      brands: header(request, "sec-ch-ua", 500),
      mobile: header(request, "sec-ch-ua-mobile", 10),
      platform: header(request, "sec-ch-ua-platform", 100),
    },
    cdnCountry: countryOf(request),
  });
  return {
    id: newId("clk"),
    tenantId: link.tenantId,
    at,
    linkId: link.linkId,
    accountId: link.accountId,
    brandId: link.brandId,
    programId: link.programId,
    trafficSourceId: sourceId,
    trackerId: tracker?.kind === "id" ? tracker.id : null,
    trackerName: tracker?.kind === "name" ? tracker.name : null,
    gclid: param(query, "gclid"),
    fbclid: param(query, "fbclid"),
    msclkid: param(query, "msclkid"),
    obclid: param(query, "obclid"),
    parameterA: param(query, "pa"),
    parameterB: param(query, "pb"),
    externalClickId: param(query, "ext"),
    // The source's own click id, under the parameter it names (an own key only: never a prototype's).
    sourceClickId: clickIdParam !== null && Object.hasOwn(query, clickIdParam) ? param(query, clickIdParam) : null,
    utm: utmOf(query),
    userAgent,
    ip,
    country: facts.country,
    referrer: header(request, "referer", 2000),
    device: facts.device,
    os: facts.os,
    browser: facts.browser,
    botReason: facts.botReason,
  };
}

/** The brand link's url with every `{clickId}` (any case) filled. */
export function redirectTarget(url: string, clickId: string): string {
  return url.replace(/\{clickid\}/gi, encodeURIComponent(clickId));
}

export interface ClickRouteDeps {
  tracking: Tracking;
  clock: Clock;
  /** Where clicks past the per-address limit are counted for their tenant. */
  usage: UsageMeter;
}

const ROUTE = "/go/:brandLinkId/:trafficSourceId";

/**
 * GET /go/{brandLinkId}/{trafficSourceId}: the hottest path of the product. With the link and
 * source cached it reads no table: the click id is made here and the click is buffered.
 */
export function clickRoute(app: FastifyInstance, deps: ClickRouteDeps): void {
  const { tracking, clock, usage } = deps;
  const { cache, clicks, clickAddresses } = tracking;
  const { options } = app.limits;

  const answer = (
    request: FastifyRequest,
    reply: FastifyReply,
    found: Found,
    sourceId: number,
    nowMs: number,
  ): FastifyReply => {
    const { link, sourceTenant } = found;
    if (link === null || sourceTenant !== link.tenantId) {
      return reply
        .status(404)
        .type("text/html; charset=utf-8")
        .header("cache-control", "no-store")
        .send(NOT_FOUND_PAGE);
    }
    const at = clock.now();
    const ip = request.ip;
    const click = clickOf(request, ip, link, sourceId, found.clickIdParam, at);
    // A HEAD (link checkers) is sent on but not recorded. A bot's GET is recorded with its
    // reason (click.botReason) and counted apart from people's clicks (click-writer.ts).
    if (request.method === "GET") {
      // Past its rate an address is still sent on (a carrier NAT puts thousands of people behind
      // one), but its clicks are not recorded: no row, no tracker, no click postback.
      if (clickAddresses.hit(ip, nowMs, MINUTE_MS) <= options.clickRatePerIpPerMinute) clicks.add(click);
      else {
        tracking.clicksNotRecorded += 1;
        meterNotRecordedClick(usage, { tenantId: link.tenantId, route: ROUTE, ip, at });
      }
    }
    return reply
      .header("cache-control", "no-store")
      .header("referrer-policy", "no-referrer-when-downgrade")
      .redirect(redirectTarget(link.url, click.id), 302);
  };

  app.get<{ Params: { brandLinkId: string; trafficSourceId: string } }>(
    ROUTE,
    {
      schema: {
        tags: ["Tracking"],
        summary: "Click redirect: records the click and answers 302 to the brand link's url",
        description:
          "Outside /api, no credential. Query: tracker (id or name), gclid, fbclid, msclkid, obclid, pa (parameterA), " +
          "pb (parameterB), ext (externalClickId), utm_source, utm_medium, utm_campaign, utm_term, utm_content. " +
          "The brand link's `{clickId}` is replaced by the new click's id. HEAD requests are redirected but not " +
          "recorded, and so are clicks from a client IP past CLICK_RATE_PER_IP_PER_MINUTE. A bot's click (a known " +
          "crawler's user agent, or an address of a data-center network) is recorded with its reason and counted " +
          "as botClicks, never as clicks; it fires no click webhook and creates no tracker. " +
          "An unknown link or traffic source answers a 404 page.",
        params: ClickParams,
        response: {
          302: Type.Null({ description: "Redirect to the brand link's url (Location header)" }),
          404: Type.String({ description: "HTML page: unknown link or traffic source" }),
        },
      },
    },
    (request, reply) => {
      const { brandLinkId, trafficSourceId } = request.params;
      if (!DIGITS.test(brandLinkId) || !DIGITS.test(trafficSourceId)) {
        return answer(request, reply, { link: null, sourceTenant: null, clickIdParam: null }, 0, 0);
      }
      const linkId = Number(brandLinkId);
      const sourceId = Number(trafficSourceId);
      const now = Date.now();
      const cached = cache.peek(linkId, sourceId, now);
      if (cached) return answer(request, reply, cached, sourceId, now);
      return cache.load(linkId, sourceId, now).then((found) => answer(request, reply, found, sourceId, Date.now()));
    },
  );
}
