/** Bounds on saved reports (docs/limits.md): a saved report is a name and a short query, not storage. */
export const SAVED_REPORT_LIMITS = {
  nameLength: 100,
  params: 30,
  paramNameLength: 50,
  paramValueLength: 2000,
  perTenant: 500,
} as const;
