export { agentCache, agentFacts } from "./agent.js";
export { type BotReason, clickFacts, loadClickFacts } from "./facts.js";
