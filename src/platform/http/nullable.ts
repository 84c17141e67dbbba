import { Type } from "typebox";

// One schema with two types, not a union: with the app's coerceTypes, ajv tries the string
// branch of a union first and turns null into "", so a cleared field would be stored as "".
export function NullableString(
  options: { minLength?: number; maxLength?: number; description?: string; format?: string } = {},
) {
  return Type.Unsafe<string | null>({ type: ["string", "null"], ...options });
}
