export { agentCache } from "./agent.js";
export { type BotReason, clickFacts, loadClickFacts } from "./facts.js";
