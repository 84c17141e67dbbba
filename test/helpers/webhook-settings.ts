/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { seedTenancy, type Tenancy, type TestApp } from "./app.js";
import { createVia } from "./catalog.js";
import { WEBHOOKS_API } from "./webhooks.js";

/**
 * The outgoing webhook settings API as its test files call it. The files share no app: each
 * starts its own and hands it in through `app()`, read when a test runs.
 */
export const SETTINGS = `${WEBHOOKS_API}/settings`;
export const URL_OK = "https://receiver.example/pb?click=${clickId}&value={{eventValue}}&raw={{{gclid}}}";
export const RECORD_KEYS = [
  "attributionSources",
  "conversionTypes",
  "createdAt",
  "eventNames",
  "id",
  "method",
  "name",
  "status",
  "statusChanges",
  "statusReason",
  "trafficSourceId",
  "updatedAt",
  "url",
];

/** The live placeholder names a webhook URL may use (the id forms included). */
export const SPEC_LIVE = [
  "clickId",
  "externalClickId",
  "eventName",
  "eventValue",
  "currencyCode",
  "eventTime",
  "eventTimeStamp",
  "conversionId",
  "conversionType",
  "parameterA",
  "parameterB",
  "gclid",
  "fbclid",
  "msclkid",
  "obclid",
  "trafficSource",
  "trafficSourceId",
  "account",
  "accountId",
  "brand",
  "brandId",
  "program",
  "programId",
  "clientUserAgent",
];

export interface WebhookRecord {
  id: string;
  name: string;
  url: string;
  method: "GET" | "POST";
  trafficSourceId: number | null;
  conversionTypes: string[];
  eventNames: Record<string, string>;
  attributionSources: string[];
  status: string;
  statusReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export function settingsApi(app: () => TestApp) {
  /** A fresh tenant whose API key also holds traffic-sources.delete. */
  const tenant = () => seedTenancy(app(), { key: { scopes: ["traffic-sources.delete"] } });
  const source = (who: Tenancy, name = "Source") => createVia(app(), who, "traffic-sources", { name });

  function post(who: Tenancy | string, payload: object) {
    const authorization = typeof who === "string" ? who : who.apiKey;
    return app().call({ method: "POST", url: SETTINGS, headers: { authorization }, payload });
  }
  function get(who: Tenancy, id: string) {
    return app().call({ method: "GET", url: `${SETTINGS}/${id}`, headers: { authorization: who.apiKey } });
  }
  function patch(who: Tenancy | string, id: string, payload: object) {
    const authorization = typeof who === "string" ? who : who.apiKey;
    return app().call({ method: "PATCH", url: `${SETTINGS}/${id}`, headers: { authorization }, payload });
  }
  function remove(who: Tenancy, id: string) {
    return app().call({ method: "DELETE", url: `${SETTINGS}/${id}`, headers: { authorization: who.apiKey } });
  }
  function list(who: Tenancy, query = "") {
    return app().call({ method: "GET", url: `${SETTINGS}${query}`, headers: { authorization: who.apiKey } });
  }
  function validate(who: Tenancy, url: string) {
    return app().call({
      method: "POST",
      url: `${SETTINGS}/validate`,
      headers: { authorization: who.apiKey },
      payload: { url },
    });
  }

  /** Creates a webhook (throws with the answer unless 201). */
  async function create(who: Tenancy, extra: object = {}, name = "Receiver"): Promise<WebhookRecord> {
    const res = await post(who, { name, url: URL_OK, method: "GET", ...extra });
    if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
    return res.json().data;
  }

  async function countRows(tenantId: string, sourceId: number | null): Promise<number> {
    const [row] = await app().ctx.db.query<{ n: number }>(
      `select count(*)::int as n from outgoing_webhooks
        where tenant_id = $1 and traffic_source_id is not distinct from $2`,
      [tenantId, sourceId],
    );
    return row?.n ?? -1;
  }

  return { tenant, source, post, get, patch, remove, list, validate, create, countRows };
}
