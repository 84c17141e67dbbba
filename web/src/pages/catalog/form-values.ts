import type { EntitySpec, FieldSpec, FilterName } from "./entities.js";

/** A form control's value: text, or the chosen ids of a several-rows field. */
export type FormValue = string | string[];
export type FormValues = Record<string, FormValue>;

const empty = (field: FieldSpec): FormValue => (field.kind === "refs" ? [] : "");

function fromRow(field: FieldSpec, value: unknown): FormValue {
  if (field.kind === "refs") return Array.isArray(value) ? value.map(String) : [];
  return value === null || value === undefined ? "" : String(value);
}

/**
 * A new row's values: a pointer at the row the list was narrowed to (a new program on the
 * programs of brand 3 offers brand 3), a choice's first value, the rest empty.
 */
function forNew(
  spec: EntitySpec,
  field: FieldSpec,
  filters: Partial<Record<FilterName, number | string | undefined>>,
): FormValue {
  if (field.kind === "choice") return field.choices?.[0] ?? "";
  const filter = spec.filters.find((f) => f.ref !== undefined && f.ref === field.ref);
  const narrowed = filter ? filters[filter.name] : undefined;
  if (narrowed === undefined) return empty(field);
  return field.kind === "refs" ? [String(narrowed)] : field.kind === "ref" ? String(narrowed) : empty(field);
}

/** The form's starting values: the row's when editing, otherwise a new row's. */
export function initialValues(
  spec: EntitySpec,
  row?: Record<string, unknown>,
  filters: Partial<Record<FilterName, number | string | undefined>> = {},
): FormValues {
  return Object.fromEntries(
    spec.fields.map((field) => [field.name, row ? fromRow(field, row[field.name]) : forNew(spec, field, filters)]),
  );
}

function same(a: FormValue | undefined, b: FormValue | undefined): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && [...a].sort().join(",") === [...b].sort().join(",");
  }
  return a === b;
}

/**
 * The request body: on create every field given (an empty name too, so the API says what is
 * wrong with it; an unchosen pointer is left out, so the API says it is required); on edit only
 * the fields that changed, an emptied optional one as null.
 */
export function bodyOf(spec: EntitySpec, values: FormValues, initial?: FormValues): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of spec.fields) {
    const value = values[field.name] ?? empty(field);
    if (initial && same(value, initial[field.name])) continue;
    if (Array.isArray(value)) body[field.name] = value.map(Number);
    else if (field.kind === "ref") {
      if (value !== "") body[field.name] = Number(value);
    } else if (value === "" && field.nullable) {
      if (initial) body[field.name] = null;
    } else body[field.name] = value;
  }
  return body;
}
