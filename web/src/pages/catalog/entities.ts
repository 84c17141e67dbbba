// What differs between the six catalog lists, as data: one generic list page and one generic
// form read it (EntityListPage, EntityFormPage). The fields and rules mirror the API's schemas
// (src/features/catalog/resources.ts); the API stays the judge of every value.

export const ENTITY_KEYS = ["brands", "programs", "accounts", "links", "traffic-sources", "trackers"] as const;
export type EntityKey = (typeof ENTITY_KEYS)[number];

/** The list filters the API offers (query parameters), across all six lists. */
export const FILTER_NAMES = ["brandId", "programId", "accountId", "status"] as const;
export type FilterName = (typeof FILTER_NAMES)[number];

export const ACCOUNT_STATUSES = ["active", "inactive"] as const;

export interface FieldSpec {
  /** The API's property, also the path of its validation errors. */
  name: string;
  label: string;
  /** text and url: free text; ref: one row of another list; refs: several; choice: one of `choices`. */
  kind: "text" | "url" | "ref" | "refs" | "choice";
  /** The API accepts null to clear it: left empty, it is sent as null (or not at all on create). */
  nullable?: boolean;
  ref?: EntityKey;
  choices?: readonly string[];
  hint?: string;
}

export interface FilterSpec {
  name: FilterName;
  label: string;
  ref?: EntityKey;
  choices?: readonly string[];
}

export interface EntitySpec {
  key: EntityKey;
  /** "Brand": in headings and buttons. */
  singular: string;
  plural: string;
  about: string;
  fields: FieldSpec[];
  filters: FilterSpec[];
  /** Other lists narrowed to one row of this one: a brand's programs. */
  related: { entity: EntityKey; filter: FilterName }[];
  /** DELETE's permission (traffic sources have their own, which account.admin does not imply). */
  deletePermission: "catalog.update" | "traffic-sources.delete";
}

const NAME: FieldSpec = { name: "name", label: "Name", kind: "text", hint: "Up to 200 characters." };

export const ENTITIES: Record<EntityKey, EntitySpec> = {
  brands: {
    key: "brands",
    singular: "Brand",
    plural: "Brands",
    about: "What is promoted. Programs offer brands; brand links point at them.",
    fields: [NAME],
    filters: [],
    related: [
      { entity: "programs", filter: "brandId" },
      { entity: "links", filter: "brandId" },
    ],
    deletePermission: "catalog.update",
  },
  programs: {
    key: "programs",
    singular: "Program",
    plural: "Programs",
    about: "Affiliate programs, each offering some brands.",
    fields: [NAME, { name: "brandIds", label: "Brands", kind: "refs", ref: "brands", hint: "The brands it offers." }],
    filters: [{ name: "brandId", label: "Brand", ref: "brands" }],
    related: [{ entity: "accounts", filter: "programId" }],
    deletePermission: "catalog.update",
  },
  accounts: {
    key: "accounts",
    singular: "Account",
    plural: "Accounts",
    about: "Your accounts at programs.",
    fields: [
      NAME,
      { name: "programId", label: "Program", kind: "ref", ref: "programs" },
      { name: "username", label: "Username", kind: "text", nullable: true, hint: "Optional, at the program." },
      { name: "status", label: "Status", kind: "choice", choices: ACCOUNT_STATUSES },
    ],
    filters: [
      { name: "programId", label: "Program", ref: "programs" },
      { name: "brandId", label: "Brand", ref: "brands" },
      { name: "status", label: "Status", choices: ACCOUNT_STATUSES },
    ],
    related: [{ entity: "links", filter: "accountId" }],
    deletePermission: "catalog.update",
  },
  links: {
    key: "links",
    singular: "Brand link",
    plural: "Brand links",
    about: "Where a click lands: an account's address for a brand.",
    fields: [
      NAME,
      { name: "accountId", label: "Account", kind: "ref", ref: "accounts" },
      { name: "brandId", label: "Brand", kind: "ref", ref: "brands" },
      {
        name: "url",
        label: "URL",
        kind: "url",
        hint: "An absolute http or https address; {clickId} is replaced by the click's id.",
      },
    ],
    filters: [
      { name: "accountId", label: "Account", ref: "accounts" },
      { name: "brandId", label: "Brand", ref: "brands" },
      { name: "programId", label: "Program", ref: "programs" },
    ],
    related: [],
    deletePermission: "catalog.update",
  },
  "traffic-sources": {
    key: "traffic-sources",
    singular: "Traffic source",
    plural: "Traffic sources",
    about: "Where clicks come from: sites, campaigns, partners.",
    fields: [
      NAME,
      { name: "url", label: "URL", kind: "url", nullable: true, hint: "Optional: an absolute http or https address." },
    ],
    filters: [],
    related: [],
    deletePermission: "traffic-sources.delete",
  },
  trackers: {
    key: "trackers",
    singular: "Tracker",
    plural: "Trackers",
    about: "Labels carried by tracking URLs, to tell placements apart.",
    fields: [
      {
        name: "name",
        label: "Name",
        kind: "text",
        hint: "4 to 50 characters, not digits only; unique regardless of case.",
      },
    ],
    filters: [],
    related: [],
    deletePermission: "catalog.update",
  },
};

export function isEntityKey(value: unknown): value is EntityKey {
  return typeof value === "string" && (ENTITY_KEYS as readonly string[]).includes(value);
}
