export { foldRollupBlocks, rollupBlocksJob } from "./blocks.js";
export type { ReportLimits } from "./params.js";
export { findReport, REPORTS } from "./registry.js";
