import { describe, expect, it } from "vitest";
import { parseTimestamptz } from "../src/platform/db/postgres.js";
import { seededRandom } from "../src/platform/seeded-random.js";

/** What JavaScript's own parser reads from the same instant written as ISO 8601 (to the ms). */
function reference(text: string): number {
  const match = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d+))?([+-]\d\d)(?::(\d\d))?$/.exec(text);
  if (!match) throw new Error(`not a timestamptz: ${text}`);
  const [, date, time, fraction = "", hours, minutes = "00"] = match;
  const ms = fraction.padEnd(3, "0").slice(0, 3);
  return Date.parse(`${date}T${time}.${ms}${hours}:${minutes}`);
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

describe("the PostgreSQL timestamptz parser", () => {
  it("reads every shape PostgreSQL writes as the same instant as ISO 8601 parsing does", () => {
    const random = seededRandom(7);
    const int = (max: number) => Math.floor(random() * max);
    for (let i = 0; i < 20_000; i++) {
      const fractionDigits = int(7);
      const fraction =
        fractionDigits === 0 ? "" : `.${String(int(10 ** fractionDigits)).padStart(fractionDigits, "0")}`;
      const offsetMinutes = [0, 0, 30, 45][int(4)] ?? 0;
      const offset = `${random() < 0.5 ? "+" : "-"}${pad(int(15))}${offsetMinutes === 0 ? "" : `:${pad(offsetMinutes)}`}`;
      const text = `${1900 + int(200)}-${pad(1 + int(12))}-${pad(1 + int(28))} ${pad(int(24))}:${pad(int(60))}:${pad(int(60))}${fraction}${offset}`;
      const parsed = parseTimestamptz(text);
      expect(parsed, text).toBeInstanceOf(Date);
      expect((parsed as Date).getTime(), text).toBe(reference(text));
    }
  });

  it("hands what it does not read itself to pg's parser", () => {
    expect(parseTimestamptz("infinity")).toBe(Number.POSITIVE_INFINITY);
    expect(parseTimestamptz("-infinity")).toBe(Number.NEGATIVE_INFINITY);
    const bc = parseTimestamptz("0044-03-15 12:00:00+00 BC");
    expect(bc).toBeInstanceOf(Date);
    expect((bc as Date).getUTCFullYear()).toBe(-43);
    const early = parseTimestamptz("0099-01-01 00:00:00+00");
    expect((early as Date).getUTCFullYear()).toBe(99);
    const secondsOffset = parseTimestamptz("1900-01-01 00:00:00+00:09:21");
    expect((secondsOffset as Date).getTime()).toBe(Date.UTC(1900, 0, 1) - (9 * 60 + 21) * 1000);
  });
});
