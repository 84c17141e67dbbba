export { exchangeRatesJob } from "./job.js";
export { type RateRow, ratesInForce, storeRates } from "./service.js";
