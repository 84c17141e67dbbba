/** The ISO 4217 codes this runtime knows (Intl's list): the currencies the service accepts. */
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf("currency"));

/** `value` upper-cased when it is a known ISO 4217 code (`eur` is EUR), else null. */
export function currencyCode(value: string): string | null {
  const code = value.toUpperCase();
  return CURRENCIES.has(code) ? code : null;
}
