import { type AgentHints, agentFacts } from "./agent.js";
import { countryOfAddress, loadCountries } from "./country.js";
import { isDataCenterAddress, loadDataCenters } from "./data-center.js";

/** Why a click is a bot's: its user agent is a known bot's, or its address a data center's. */
export type BotReason = "user_agent" | "data_center";

/** What the service works out about a click from its address and headers. */
export interface ClickFacts {
  country: string | null;
  device: string | null;
  os: string | null;
  browser: string | null;
  botReason: BotReason | null;
}

export interface ClickSeen {
  /** The client address, as TRUST_PROXY makes it (the socket's, or the proxy chain's client). */
  ip: string;
  userAgent: string | null;
  hints: AgentHints;
  /** A country a trusted CDN in front of the service set: it wins over the address's. */
  cdnCountry: string | null;
}

/** Loads the address databases once per process (about 150 ms): called as the service starts. */
export function loadClickFacts(): void {
  loadCountries();
  loadDataCenters();
}

/** The facts of one click: its country, device, OS and browser families, and whether a bot made it. */
export function clickFacts(seen: ClickSeen): ClickFacts {
  const agent = agentFacts(seen.userAgent, seen.hints);
  const botReason: BotReason | null = agent.bot ? "user_agent" : isDataCenterAddress(seen.ip) ? "data_center" : null;
  return {
    country: seen.cdnCountry ?? countryOfAddress(seen.ip),
    device: agent.device,
    os: agent.os,
    browser: agent.browser,
    botReason,
  };
}
