export { foldRollupBlocks, rollupBlocksJob } from "./blocks.js";
export { ReportGate, ReportsBusy, reportSlots } from "./gate.js";
export type { ReportLimits } from "./params.js";
export { findReport, REPORTS } from "./registry.js";
export { isDefaultStatus } from "./status.js";
