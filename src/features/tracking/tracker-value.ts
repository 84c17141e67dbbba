/** A `tracker` value: digits only is an id (catalog ids are positive integers), else a name of 4 to 50 characters. */
export type TrackerValue = { kind: "id"; id: number } | { kind: "name"; name: string };

export const TRACKER_NAME_MIN = 4;
export const TRACKER_NAME_MAX = 50;

export class TrackerValueError extends Error {}

/** Reads a tracker value; throws TrackerValueError naming the rule it breaks. */
export function readTrackerValue(raw: string): TrackerValue {
  const value = raw.trim();
  if (/^[0-9]+$/.test(value)) {
    const id = Number(value);
    if (!Number.isSafeInteger(id) || id < 1) throw new TrackerValueError(`tracker id ${value} does not exist`);
    return { kind: "id", id };
  }
  // Characters, not UTF-16 units, as the database counts them: an emoji is one.
  const length = [...value].length;
  if (length < TRACKER_NAME_MIN || length > TRACKER_NAME_MAX) {
    throw new TrackerValueError(
      `tracker name '${value}' must be ${TRACKER_NAME_MIN} to ${TRACKER_NAME_MAX} characters (it has ${length})`,
    );
  }
  if (value.includes("\u0000")) throw new TrackerValueError("tracker name must not contain NUL characters");
  return { kind: "name", name: value };
}

/** The click route's lenient reading: a value that breaks the rules records the click without a tracker. */
export function parseTrackerValue(raw: string | null): TrackerValue | null {
  if (raw === null) return null;
  try {
    return readTrackerValue(raw);
  } catch {
    return null;
  }
}
