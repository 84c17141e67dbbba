import { isIPv4, isIPv6 } from "node:net";

const MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

/**
 * The address as the databases key it: an IPv4 address a dual-stack socket reports as IPv6
 * (`::ffff:1.2.3.4`) becomes plain IPv4; anything that is not an address is null.
 */
export function plainAddress(ip: string): string | null {
  const mapped = MAPPED.exec(ip);
  if (mapped?.[1] !== undefined) return mapped[1];
  return isIPv4(ip) || isIPv6(ip) ? ip : null;
}

/** An IPv4 address as an unsigned 32-bit number. */
export function ipv4Number(ip: string): number {
  let value = 0;
  for (const part of ip.split(".")) value = value * 256 + Number(part);
  return value;
}

/** The first 64 bits (the routed prefix) of an IPv6 address, as an unsigned bigint. */
export function ipv6Prefix(ip: string): bigint {
  const zone = ip.indexOf("%");
  const bare = zone === -1 ? ip : ip.slice(0, zone);
  const [head = "", tail] = bare.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  // A trailing dotted IPv4 part (`64:ff9b::1.2.3.4`) stands for two groups.
  const tailCount = tailGroups.length + (tailGroups.at(-1)?.includes(".") ? 1 : 0);
  const groups =
    tail === undefined
      ? headGroups
      : [...headGroups, ...Array<string>(Math.max(0, 8 - headGroups.length - tailCount)).fill("0"), ...tailGroups];
  let value = 0n;
  for (let i = 0; i < 4; i++) value = (value << 16n) | BigInt(Number.parseInt(groups[i] ?? "0", 16) || 0);
  return value;
}
