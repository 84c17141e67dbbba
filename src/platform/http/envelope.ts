import { type Static, type TSchema, Type } from "typebox";

export const Pagination = Type.Object({
  offset: Type.Integer({ minimum: 0 }),
  limit: Type.Integer({ minimum: 1 }),
  total: Type.Integer({ minimum: 0, description: "Number of items in the whole filtered set" }),
});
export type Pagination = Static<typeof Pagination>;

const Code = Type.String({ description: "Stable snake_case result code: ok, validation_error, unauthorized, ..." });

/** `{ code, message, data }`: the shape of every /api answer. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ code: Code, message: Type.String(), data });
}

export function PagedEnvelope<T extends TSchema>(item: T) {
  return Type.Object({ code: Code, message: Type.String(), data: Type.Array(item), pagination: Pagination });
}

export const ErrorEnvelope = Type.Object({
  code: Code,
  message: Type.String({ description: "Names the field, value or placeholder at fault" }),
  data: Type.Union([
    Type.Null(),
    Type.Object(
      {
        errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
        requestId: Type.Optional(Type.String()),
      },
      { additionalProperties: true },
    ),
  ]),
});

export function ok<T>(data: T, message = "OK") {
  return { code: "ok", message, data };
}

export function paged<T>(items: T[], page: { offset: number; limit: number }, total: number) {
  return { code: "ok", message: "OK", data: items, pagination: { offset: page.offset, limit: page.limit, total } };
}

export const PageQuery = Type.Object({
  // The maximum is the range of exact integers (an offset past the last row is an empty page);
  // 1e21 would overflow PostgreSQL's bigint OFFSET.
  offset: Type.Integer({
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    default: 0,
    description: "0-based index of the first item",
  }),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50, description: "Page size, 1-500" }),
});
export type PageQuery = Static<typeof PageQuery>;

/** Error answers declared on every route, so the OpenAPI document shows them. */
export const errorResponses = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  403: ErrorEnvelope,
  404: ErrorEnvelope,
  429: ErrorEnvelope,
  500: ErrorEnvelope,
} as const;

/** The error answers of a route that can also refuse with 409 conflict (a duplicate name, a count limit reached). */
export const conflictResponses = { ...errorResponses, 409: ErrorEnvelope } as const;
