import { Type } from "typebox";
import { PageQuery } from "../../platform/http/envelope.js";
import { SAVED_REPORT_LIMITS as L } from "./limits.js";

/** The report pages a saved report can reopen: the performance report and the two composites. */
export const SAVED_REPORT_KINDS = ["performance", "accounts", "links"] as const;
export type SavedReportKind = (typeof SAVED_REPORT_KINDS)[number];

const Kind = Type.Enum(SAVED_REPORT_KINDS, { description: "Which report the parameters are for" });

const Name = Type.String({
  minLength: 1,
  maxLength: L.nameLength,
  description: `1-${L.nameLength} characters, unique on the tenant regardless of case`,
});

const Params = Type.Record(Type.String(), Type.String({ maxLength: L.paramValueLength }), {
  maxProperties: L.params,
  description: `The report's query parameters as strings (at most ${L.params}; names of letters, digits, '_' or '-', up to ${L.paramNameLength} characters; values up to ${L.paramValueLength})`,
});

export const SavedReportSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  report: Kind,
  params: Type.Record(Type.String(), Type.String()),
  createdBy: Type.Object(
    { id: Type.String(), name: Type.String() },
    { description: "The person or API key that saved it, as named then" },
  ),
  createdAt: Type.String({ format: "date-time" }),
});

export const NewSavedReportBody = Type.Object(
  { name: Name, report: Kind, params: Type.Optional(Params) },
  { additionalProperties: false },
);

export const SavedReportPatchBody = Type.Object(
  { name: Type.Optional(Name), params: Type.Optional(Params) },
  { additionalProperties: false, minProperties: 1 },
);

export const SavedReportListQuery = Type.Object({
  ...PageQuery.properties,
  report: Type.Optional(Kind),
  search: Type.Optional(Type.String({ maxLength: 200, description: "Case-insensitive part of the name" })),
});
