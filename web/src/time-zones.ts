/**
 * The time zones a picker offers: the account's (the `timeZone` setting), this browser's, UTC,
 * then every IANA zone this browser lists. No imports, so the logic tests load it as it is.
 */

export const UTC = "UTC";

/** The zone this browser's clock is set to; UTC where the browser names none. */
export function browserTimeZone(): string {
  try {
    return new Intl.DateTimeFormat().resolvedOptions().timeZone || UTC;
  } catch {
    return UTC;
  }
}

let listed: readonly string[] | undefined;

/** Every IANA zone this browser lists, A to Z, with UTC (which Intl lists under no name of its own). */
export function listedTimeZones(): readonly string[] {
  listed ??= [...new Set([UTC, ...Intl.supportedValuesOf("timeZone")])].sort();
  return listed;
}

/**
 * A zone's listed spelling for a name in any case ("asia/tokyo" is "Asia/Tokyo"); a name the
 * browser does not list (an alias, or no zone at all) as given, for the API to judge.
 */
export function listedSpelling(name: string): string {
  const lower = name.toLowerCase();
  return listedTimeZones().find((zone) => zone.toLowerCase() === lower) ?? name;
}

export interface ZoneChoice {
  zone: string;
  /** Why it is offered first: "The account's time zone", "The account's and this browser's time zone". */
  note?: string;
}

/**
 * What a picker offers: the account's zone, this browser's and UTC first, each once and said
 * why, then every other listed zone, A to Z.
 */
export function zoneChoices(accountZone: string | undefined, browserZone: string): ZoneChoice[] {
  const first: { zone: string; whose: string[] }[] = [];
  const add = (zone: string, whose: string[]) => {
    const same = first.find((c) => c.zone.toLowerCase() === zone.toLowerCase());
    if (same) same.whose.push(...whose);
    else first.push({ zone, whose });
  };
  if (accountZone) add(accountZone, ["the account's"]);
  add(browserZone, ["this browser's"]);
  add(UTC, []);
  const noted = first.map(({ zone, whose }): ZoneChoice => {
    if (whose.length === 0) return { zone, note: "Coordinated Universal Time" };
    const note = `${whose.join(" and ")} time zone`;
    return { zone, note: note.charAt(0).toUpperCase() + note.slice(1) };
  });
  const offered = new Set(first.map((c) => c.zone.toLowerCase()));
  return [
    ...noted,
    ...listedTimeZones()
      .filter((zone) => !offered.has(zone.toLowerCase()))
      .map((zone) => ({ zone })),
  ];
}
