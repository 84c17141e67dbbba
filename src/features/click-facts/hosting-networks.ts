/**
 * Which autonomous systems count as data centers (docs/decisions.md, "Data-center addresses"):
 * a system whose registered organization name (as the ASN data ships it) says it sells hosting,
 * servers or cloud, and the few large clouds whose names do not say so. People browse from
 * access networks (home, mobile, office); a click from a hosting network is a script, a crawler
 * or a proxy. A consumer VPN or privacy relay that exits through a hosting network is counted as
 * a bot too: its visitor cannot be told from a script.
 */
const HOSTING_NAME =
  /\b(hosting|hoster|host(ed)? ?services?|data ?cent(er|re)s?|datacent(er|re)|cloud|servers?|vps|colo(cation)?|dedicated|web ?services)\b/i;

// The largest clouds and hosts by address space, named by their numbers because their
// organization names ("Amazon.com, Inc.", "Google LLC") do not say what they sell.
const CLOUD_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [16509, "Amazon Web Services"],
  [14618, "Amazon Web Services"],
  [15169, "Google"],
  [396982, "Google Cloud"],
  [8075, "Microsoft Azure"],
  [14061, "DigitalOcean"],
  [16276, "OVHcloud"],
  [24940, "Hetzner"],
  [63949, "Akamai Connected Cloud (Linode)"],
  [20473, "Vultr (The Constant Company)"],
  [45102, "Alibaba Cloud"],
  [132203, "Tencent Cloud"],
  [31898, "Oracle Cloud"],
  [51167, "Contabo"],
  [12876, "Scaleway"],
  [8560, "IONOS"],
  [9009, "M247"],
  [60068, "Datacamp (CDN77)"],
]);

/** True when the system is a data-center network by the rule above. */
export function isHostingNetwork(asn: number, organization: string): boolean {
  return CLOUD_SYSTEMS.has(asn) || HOSTING_NAME.test(organization);
}
