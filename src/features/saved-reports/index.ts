// The saved-reports feature's public API: its bounds (docs/limits.md). No other feature uses its
// service yet; app.ts registers its routes from routes.ts, as for every feature.
export { SAVED_REPORT_LIMITS } from "./limits.js";
