import type { FieldError } from "./errors.js";

/**
 * ajv's own messages (`must NOT have fewer than 4 characters`, `must match pattern "^[A-Z]..."`)
 * read as code; these read as the end of a sentence that starts with the field's name, for API
 * callers and for the people the dashboard shows them to (`name must be at least 4 characters
 * long`). A pattern is explained by the schema's own description, which says what the field
 * takes; a schema whose description does not say it should.
 */

/** The parts of an ajv error (verbose: with the schema and the value) that a message reads. */
export interface SchemaFailure {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string | undefined;
  parentSchema?: unknown;
  data?: unknown;
}

const TYPE_NAMES: Record<string, string> = {
  integer: "a whole number",
  number: "a number",
  string: "a string",
  boolean: "true or false",
  array: "a list",
  object: "an object",
  null: "null",
};

const FORMATS: Record<string, string> = {
  "date-time": "a date and time such as 2026-01-31T09:30:00Z",
  date: "a date such as 2026-01-31",
  email: "an email address",
  uri: "an absolute URL",
};

const plural = (count: unknown, one: string, many: string) => `${String(count)} ${count === 1 ? one : many}`;

function description(schema: unknown): string | null {
  if (typeof schema !== "object" || schema === null) return null;
  const text = (schema as { description?: unknown }).description;
  return typeof text === "string" && text.length > 0 ? text.replace(/\.$/, "") : null;
}

function typeNames(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => TYPE_NAMES[String(t)] ?? String(t)).join(" or ");
}

/** The predicate for one failed keyword; the field's name goes before it. */
export function schemaMessage(failure: SchemaFailure): string {
  const { params } = failure;
  switch (failure.keyword) {
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not an accepted property";
    case "type":
      return `must be ${typeNames(params.type)}`;
    case "minLength":
      return params.limit === 1
        ? "must not be empty"
        : `must be at least ${plural(params.limit, "character", "characters")} long`;
    case "maxLength":
      return `must be at most ${plural(params.limit, "character", "characters")} long`;
    case "minimum":
      return `must be at least ${String(params.limit)}`;
    case "maximum":
      return `must be at most ${String(params.limit)}`;
    case "exclusiveMinimum":
      return `must be more than ${String(params.limit)}`;
    case "exclusiveMaximum":
      return `must be less than ${String(params.limit)}`;
    case "multipleOf":
      return `must be a multiple of ${String(params.multipleOf)}`;
    case "minItems":
      return `must list at least ${plural(params.limit, "item", "items")}`;
    case "maxItems":
      return `must list at most ${plural(params.limit, "item", "items")}`;
    case "uniqueItems":
      return `must not list the same value twice (items ${String(params.j)} and ${String(params.i)} are equal)`;
    case "minProperties":
      return `must have at least ${plural(params.limit, "property", "properties")}`;
    case "maxProperties":
      return `must have at most ${plural(params.limit, "property", "properties")}`;
    case "format": {
      const format = String(params.format);
      return `must be ${FORMATS[format] ?? `a valid ${format}`}`;
    }
    case "pattern": {
      const said = description(failure.parentSchema);
      return said ? `is not in the accepted form: ${said}` : "is not in the accepted form";
    }
    case "anyOf":
    case "oneOf":
      return "does not match any of the accepted forms";
    default:
      return failure.message ?? "is invalid";
  }
}

/** How many field errors one answer lists: enough for any form, bounded whatever the body holds. */
export const MAX_FIELD_ERRORS = 20;

/** The errors in order, each (field, message) once, at most MAX_FIELD_ERRORS. */
export function distinctErrors(errors: readonly FieldError[]): FieldError[] {
  const seen = new Set<string>();
  const kept: FieldError[] = [];
  for (const error of errors) {
    const key = `${error.path}\u0000${error.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    kept.push(error);
    if (kept.length === MAX_FIELD_ERRORS) break;
  }
  return kept;
}
