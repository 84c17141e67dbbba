import { Type } from "typebox";
import { DateParam, TimeZoneParam } from "../../platform/http/dates.js";
import { PageQuery } from "../../platform/http/envelope.js";
import { CONVERSION_STATUSES, CONVERSION_TYPES, RAW_EVENT_RETENTION_DAYS } from "../tracking/index.js";
import { CLICK_LOG_DEFAULT_DAYS, CLICK_LOG_MAX_DAYS } from "./window.js";

const Text = Type.Union([Type.String(), Type.Null()]);
const Id = Type.Union([Type.Integer(), Type.Null()]);

export const ClickRecord = Type.Object({
  id: Type.String({ description: "The click id (clk_...)" }),
  at: Type.String({ format: "date-time" }),
  linkId: Type.Integer(),
  accountId: Type.Integer(),
  brandId: Type.Integer(),
  programId: Type.Integer(),
  trafficSourceId: Type.Integer(),
  trackerId: Id,
  unique: Type.Boolean({ description: "The visitor's first click on this link and source that day" }),
  country: Type.Union([Type.String(), Type.Null()], { description: "ISO 3166 code; null when not known" }),
  device: Type.Union([Type.String(), Type.Null()], {
    description: "desktop, mobile, tablet or other; null when not known",
  }),
  os: Type.Union([Type.String(), Type.Null()], { description: "OS family (Android, iOS, Windows...)" }),
  browser: Type.Union([Type.String(), Type.Null()], { description: "Browser family (Chrome, Safari...)" }),
  bot: Type.Boolean({ description: "Made by a bot: not counted in clicks, counted in botClicks" }),
  botReason: Type.Union([Type.Literal("user_agent"), Type.Literal("data_center"), Type.Null()], {
    description: "user_agent: a known bot's user agent; data_center: an address of a hosting network",
  }),
  ip: Type.Union([Type.String(), Type.Null()], { description: "The address's network only: /24 (IPv4) or /48 (IPv6)" }),
  userAgent: Text,
  parameterA: Text,
  parameterB: Text,
  gclid: Text,
  fbclid: Text,
  msclkid: Text,
  obclid: Text,
  externalClickId: Text,
  sourceClickId: Text,
  referrer: Text,
});

export const ClickDetail = Type.Object({
  ...ClickRecord.properties,
  pageViews: Type.Array(
    Type.Object({ url: Type.String(), title: Text, referrer: Text, at: Type.String({ format: "date-time" }) }),
    { description: "The click's page views, oldest first, at most 500" },
  ),
  conversions: Type.Array(
    Type.Object({
      id: Type.String(),
      type: Type.Enum(CONVERSION_TYPES),
      status: Type.Enum(CONVERSION_STATUSES),
      occurredAt: Type.String({ format: "date-time" }),
    }),
    { description: "The conversions attributed to the click, oldest first, at most 500" },
  ),
});

const IdParam = (what: string) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: `Only this ${what}` }));

export const ClickListQuery = Type.Object(
  {
    ...PageQuery.properties,
    linkId: IdParam("link"),
    trafficSourceId: IdParam("traffic source"),
    trackerId: IdParam("tracker"),
    country: Type.Optional(Type.String({ pattern: "^[A-Za-z]{2}$", description: "Two-letter country code, any case" })),
    device: Type.Optional(
      Type.Enum(["desktop", "mobile", "tablet", "other"], { description: "Only clicks of this device type" }),
    ),
    bot: Type.Optional(
      Type.Boolean({ description: "true: bots' clicks only; false: people's only; both when absent" }),
    ),
    clickId: Type.Optional(Type.String({ maxLength: 100, description: "Exact click id (the window is not applied)" })),
    dateFrom: Type.Optional(DateParam),
    dateTo: Type.Optional(DateParam),
    timeZone: Type.Optional(TimeZoneParam),
  },
  {
    additionalProperties: false,
    description:
      `A window of at most ${CLICK_LOG_MAX_DAYS} days (the last ${CLICK_LOG_DEFAULT_DAYS} when dateFrom is absent); ` +
      `clicks are kept ${RAW_EVENT_RETENTION_DAYS} days`,
  },
);

export const ClickIdParams = Type.Object({ clickId: Type.String({ description: "The click id (clk_...)" }) });
