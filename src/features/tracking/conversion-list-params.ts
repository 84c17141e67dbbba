import { ApiError } from "../../platform/http/errors.js";
import { CONVERSION_TYPES, type ConversionType, canonicalTypeName, isConversionType } from "./conversion-types.js";

/** At most this many traffic sources in one `trafficSourceId` list: a filter, not a catalog dump. */
export const MAX_LISTED_SOURCES = 50;

/**
 * `type` of the conversions list: a comma list of types in any case (`signup,FirstTimeDeposit`),
 * answered in the types' order; a name that is no type is a 400 naming `field`.
 */
export function parseTypeList(field: string, raw: string | undefined): ConversionType[] | undefined {
  if (raw === undefined) return undefined;
  const picked = new Set<string>();
  for (const part of raw.split(",")) {
    const type = canonicalTypeName(part);
    if (!isConversionType(type)) {
      throw ApiError.validation(
        field,
        `'${part.trim()}' is not a conversion type; a comma list of ${CONVERSION_TYPES.join(", ")} (any case)`,
      );
    }
    picked.add(type);
  }
  return CONVERSION_TYPES.filter((t) => picked.has(t));
}

/** `trafficSourceId`: a comma list of positive whole ids (`3,7`), at most MAX_LISTED_SOURCES. */
export function parseIdList(field: string, raw: string | undefined): number[] | undefined {
  if (raw === undefined) return undefined;
  const parts = raw.split(",").map((part) => part.trim());
  if (parts.length > MAX_LISTED_SOURCES) {
    throw ApiError.validation(field, `at most ${MAX_LISTED_SOURCES} ids, got ${parts.length}`);
  }
  return [
    ...new Set(
      parts.map((part) => {
        const id = Number(part);
        if (!/^\d{1,15}$/.test(part) || id < 1) {
          throw ApiError.validation(field, `'${part}' is not an id; a comma list of whole numbers from 1`);
        }
        return id;
      }),
    ),
  ];
}
