import { type TObject, Type } from "typebox";
import { PageQuery } from "../../platform/http/envelope.js";
import { NullableString } from "../../platform/http/nullable.js";
import type { Permission } from "../auth/index.js";
import { ClickIdParam, NullablePostback, PostbackOrNull } from "../source-postbacks/index.js";

export type CatalogTable = "brands" | "programs" | "accounts" | "links" | "traffic_sources" | "trackers";

/**
 * How one API field is stored: `ref` and `refs` point at catalog rows that must exist in the
 * caller's tenant; `url` must be an absolute http or https address.
 */
export interface FieldDef {
  column: string;
  kind: "text" | "url" | "ref" | "refs" | "json";
  /** Length bounds checked after trimming. */
  length?: { min: number; max: number };
  /** Refuses a value of digits only, with this reason (a tracker value of digits is read as an id). */
  notDigitsOnly?: string;
  ref?: { table: CatalogTable; what: string };
}

/** A delete is refused (409) while any row matches `sql` ($1 = tenant, $2 = id). */
interface InUseCheck {
  sql: string;
  what: string;
}

export interface CatalogResource {
  path: string;
  table: CatalogTable;
  /** "Brand", "Brand link": used in messages. */
  label: string;
  /** Subject type and action prefix in the audit log, singular like `api_token`. */
  audit: string;
  tag: string;
  fields: Record<string, FieldDef>;
  item: TObject;
  create: TObject;
  patch: TObject;
  listQuery: TObject;
  /** Query parameter -> condition on alias `t` where `$` is the parameter's placeholder. */
  filters: Record<string, string>;
  /**
   * What `search` matches, on alias `t`: every `$` is the contains-pattern's placeholder, `$1` the
   * tenant. Without it, the name.
   */
  search?: string;
  /**
   * Names of the rows this one points at, answered as `names` (a brand link's account and brand:
   * link names repeat across accounts). Read in the same statement, by primary key.
   */
  names?: Record<string, { table: CatalogTable; column: string }>;
  inUse: InUseCheck[];
  deletePermission: Permission;
  /** Advice on a saved row that is valid but will not work as meant (answered as `warnings`). */
  warnings?: (item: Record<string, unknown>) => Warning[];
}

export interface Warning {
  field: string;
  message: string;
}

const WarningSchema = Type.Object({
  field: Type.String({ description: "The field the advice is about" }),
  message: Type.String(),
});

/** click-route.ts fills `{clickId}` in any case; without it no conversion can name the click. */
export function brandLinkWarnings(item: Record<string, unknown>): Warning[] {
  if (typeof item.url !== "string" || /\{clickid\}/i.test(item.url)) return [];
  return [
    {
      field: "url",
      message:
        "The URL has no {clickId}: the brand cannot send the click id back, so its conversions cannot be tied to clicks",
    },
  ];
}

const CatalogId = Type.Integer({ minimum: 1, maximum: 9_007_199_254_740_991 });
const Name = Type.String({ minLength: 1, maxLength: 200, description: "Display name" });
const Url = Type.String({ minLength: 1, maxLength: 2048, description: "Absolute http or https address" });
const Timestamps = {
  createdAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
};
const Search = (description = "Case-insensitive part of the name (trigram index)") =>
  Type.Optional(Type.String({ maxLength: 200, description }));
const IdFilter = (what: string) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: 9_007_199_254_740_991, description: `Only rows of this ${what}` }));
// No query separators or spaces: the macro is put into the generated URL as written.
const ClickIdMacro = Type.Unsafe<string | null>({
  type: ["string", "null"],
  minLength: 1,
  maxLength: 100,
  pattern: "^[^\\s&#?=]+$",
  description:
    "The macro the source fills with its own click id, e.g. {clickid}; the link generator adds " +
    "<clickIdParam>=<clickIdMacro> to the tracking URL. No spaces, &, #, ? or =; null for none",
});
const AccountStatus = Type.Enum(["active", "inactive"]);
const NameOrNull = Type.Union([Type.String(), Type.Null()]);

function listQuery(
  filters: Record<string, ReturnType<typeof IdFilter> | ReturnType<typeof Type.Optional>>,
  searchDescription?: string,
): TObject {
  return Type.Object(
    { ...PageQuery.properties, search: Search(searchDescription), ...filters },
    { additionalProperties: false },
  );
}

/** Create and patch bodies: patch is every field optional, at least one present. */
function bodies(properties: Parameters<typeof Type.Object>[0]): { create: TObject; patch: TObject } {
  const create = Type.Object(properties, { additionalProperties: false });
  const patch = Type.Partial(create, { additionalProperties: false, minProperties: 1 });
  return { create, patch };
}

const brand = bodies({ name: Name });
const program = bodies({
  name: Name,
  brandIds: Type.Optional(Type.Array(CatalogId, { uniqueItems: true, maxItems: 500, description: "Brands it offers" })),
});
const account = bodies({
  name: Name,
  programId: CatalogId,
  username: Type.Optional(NullableString({ maxLength: 200 })),
  status: Type.Optional(AccountStatus),
});
const link = bodies({
  accountId: CatalogId,
  brandId: CatalogId,
  name: Name,
  url: Type.String({ ...Url, description: "Where a click lands; `{clickId}` is replaced by the click's id" }),
});
const trafficSource = bodies({
  name: Name,
  url: Type.Optional(NullableString({ minLength: 1, maxLength: 2048, description: "Absolute http or https address" })),
  clickIdParam: Type.Optional(ClickIdParam),
  clickIdMacro: Type.Optional(ClickIdMacro),
  postback: Type.Optional(NullablePostback),
});
const tracker = bodies({
  name: Type.String({
    minLength: 4,
    maxLength: 50,
    description:
      "4 to 50 characters, not digits only (a digits-only tracker value is read as an id); unique regardless of case",
  }),
});

export const RESOURCES: CatalogResource[] = [
  {
    path: "brands",
    table: "brands",
    audit: "brand",
    label: "Brand",
    tag: "Brands",
    fields: { name: { column: "name", kind: "text" } },
    item: Type.Object({ id: CatalogId, name: Type.String(), ...Timestamps }),
    ...brand,
    listQuery: listQuery({}),
    filters: {},
    inUse: [
      { sql: "select 1 from links where tenant_id = $1 and brand_id = $2 limit 1", what: "brand links" },
      { sql: "select 1 from programs where tenant_id = $1 and $2 = any(brand_ids) limit 1", what: "programs" },
    ],
    deletePermission: "catalog.update",
  },
  {
    path: "programs",
    table: "programs",
    audit: "program",
    label: "Program",
    tag: "Programs",
    fields: {
      name: { column: "name", kind: "text" },
      brandIds: { column: "brand_ids", kind: "refs", ref: { table: "brands", what: "Brand" } },
    },
    item: Type.Object({ id: CatalogId, name: Type.String(), brandIds: Type.Array(CatalogId), ...Timestamps }),
    ...program,
    listQuery: listQuery({ brandId: IdFilter("brand") }),
    filters: { brandId: "$ = any(t.brand_ids)" },
    inUse: [{ sql: "select 1 from accounts where tenant_id = $1 and program_id = $2 limit 1", what: "accounts" }],
    deletePermission: "catalog.update",
  },
  {
    path: "accounts",
    table: "accounts",
    audit: "account",
    label: "Account",
    tag: "Accounts",
    fields: {
      name: { column: "name", kind: "text" },
      programId: { column: "program_id", kind: "ref", ref: { table: "programs", what: "Program" } },
      username: { column: "username", kind: "text" },
      status: { column: "status", kind: "text" },
    },
    item: Type.Object({
      id: CatalogId,
      name: Type.String(),
      programId: CatalogId,
      username: Type.Union([Type.String(), Type.Null()]),
      status: AccountStatus,
      ...Timestamps,
    }),
    ...account,
    listQuery: listQuery({
      programId: IdFilter("program"),
      brandId: IdFilter("brand (through the account's program)"),
      status: Type.Optional(AccountStatus),
    }),
    filters: {
      programId: "t.program_id = $",
      brandId: "t.program_id in (select p.id from programs p where $ = any(p.brand_ids))",
      status: "t.status = $",
    },
    inUse: [{ sql: "select 1 from links where tenant_id = $1 and account_id = $2 limit 1", what: "brand links" }],
    deletePermission: "catalog.update",
  },
  {
    path: "links",
    table: "links",
    audit: "link",
    label: "Brand link",
    tag: "Brand links",
    fields: {
      accountId: { column: "account_id", kind: "ref", ref: { table: "accounts", what: "Account" } },
      brandId: { column: "brand_id", kind: "ref", ref: { table: "brands", what: "Brand" } },
      name: { column: "name", kind: "text" },
      url: { column: "url", kind: "url" },
    },
    item: Type.Object({
      id: CatalogId,
      accountId: CatalogId,
      brandId: CatalogId,
      name: Type.String(),
      url: Type.String(),
      warnings: Type.Array(WarningSchema, { description: "Advice on the saved link, e.g. a URL without {clickId}" }),
      names: Type.Optional(
        Type.Object(
          { account: NameOrNull, brand: NameOrNull },
          { description: "The names of accountId and brandId (link names repeat across accounts)" },
        ),
      ),
      ...Timestamps,
    }),
    ...link,
    listQuery: listQuery(
      {
        accountId: IdFilter("account"),
        brandId: IdFilter("brand"),
        programId: IdFilter("program (through the account)"),
      },
      "Case-insensitive part of the link's name, or of its account's or brand's name",
    ),
    filters: {
      accountId: "t.account_id = $",
      brandId: "t.brand_id = $",
      programId: "t.account_id in (select a.id from accounts a where a.program_id = $)",
    },
    // The picker labels a link with its brand and account: a part of either finds it too.
    search:
      "(lower(t.name) like $" +
      " or t.account_id in (select a.id from accounts a where a.tenant_id = $1 and lower(a.name) like $)" +
      " or t.brand_id in (select b.id from brands b where b.tenant_id = $1 and lower(b.name) like $))",
    names: { account: { table: "accounts", column: "account_id" }, brand: { table: "brands", column: "brand_id" } },
    inUse: [],
    deletePermission: "catalog.update",
    warnings: brandLinkWarnings,
  },
  {
    path: "traffic-sources",
    table: "traffic_sources",
    audit: "traffic_source",
    label: "Traffic source",
    tag: "Traffic sources",
    fields: {
      name: { column: "name", kind: "text" },
      url: { column: "url", kind: "url" },
      clickIdParam: { column: "click_id_param", kind: "text" },
      clickIdMacro: { column: "click_id_macro", kind: "text" },
      // Checked by the routes before the transaction (docs/traffic-source-postbacks.md).
      postback: { column: "postback", kind: "json" },
    },
    item: Type.Object({
      id: CatalogId,
      name: Type.String(),
      url: Type.Union([Type.String(), Type.Null()]),
      clickIdParam: Type.Union([Type.String(), Type.Null()]),
      clickIdMacro: Type.Union([Type.String(), Type.Null()]),
      // Left out for a caller without webhooks.read: its URL often carries the network's token.
      postback: Type.Optional(PostbackOrNull),
      ...Timestamps,
    }),
    ...trafficSource,
    listQuery: listQuery({}),
    filters: {},
    inUse: [],
    deletePermission: "traffic-sources.delete",
  },
  {
    path: "trackers",
    table: "trackers",
    audit: "tracker",
    label: "Tracker",
    tag: "Trackers",
    fields: {
      name: {
        column: "name",
        kind: "text",
        length: { min: 4, max: 50 },
        notDigitsOnly: "must not be digits only: a tracker value of digits is read as an id",
      },
    },
    item: Type.Object({ id: CatalogId, name: Type.String(), ...Timestamps }),
    ...tracker,
    listQuery: listQuery({}),
    filters: {},
    inUse: [],
    deletePermission: "catalog.update",
  },
];

export const CatalogIdParams = Type.Object({ id: CatalogId }, { additionalProperties: false });
