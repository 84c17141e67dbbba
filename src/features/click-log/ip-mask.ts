import { isIPv4, isIPv6 } from "node:net";

/**
 * A click's address as the log shows it: the network, not the visitor. An IPv4 address keeps its
 * first three bytes (/24: 203.0.113.0), an IPv6 address its first three groups (/48:
 * 2001:db8:85a3::); enough to tell a data center or a network from another, not a household.
 */
export function maskedAddress(ip: string | null): string | null {
  if (ip === null || ip === "") return null;
  if (isIPv4(ip)) return `${ip.split(".").slice(0, 3).join(".")}.0`;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1]) return maskedAddress(mapped[1]);
  if (isIPv6(ip)) {
    const [head = "", tail = ""] = ip.split("::");
    const left = head === "" ? [] : head.split(":");
    const right = tail === "" ? [] : tail.split(":");
    const groups = ip.includes("::") ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right] : left;
    return `${groups
      .slice(0, 3)
      .map((g) => g.replace(/^0+(?=.)/, "").toLowerCase())
      .join(":")}::`;
  }
  return null;
}
