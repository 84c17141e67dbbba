/** How the usage series' buckets read. No imports but periods (which imports nothing), so the logic tests load it as it is. */
import { wallTime } from "../../periods.js";

/**
 * A bucket's start as its axis label, on the clock of the answer's `timeZone`: the day, or the
 * day and the hour. A day bucket starts at local midnight, which is another UTC day east of UTC.
 */
export function bucketLabel(start: string, interval: "hour" | "day", zone: string): string {
  const wall = wallTime(Date.parse(start), zone);
  return interval === "day" ? wall.slice(0, 10) : `${wall.slice(5, 10)} ${wall.slice(11, 16)}`;
}
