import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { currencyChoices, type ReportMeta } from "../currency";
import { currencyName, formatInteger } from "../format";
import { settingsQuery } from "../pages/settings/queries";
import { useCan } from "../permissions";
import { Field } from "./Field";

interface CurrencyPickerProps {
  /** The currency in the page's address; undefined: the tenant's reporting currency (no parameter sent). */
  value: string | undefined;
  onChange: (currency: string | undefined) => void;
  /** What the page's answer is in (`meta.currency`): names the default when nothing is chosen. */
  shown: string | undefined;
  /** The API's message for the `currency` parameter. */
  error?: string | undefined;
  inline?: boolean;
}

/** "EUR – Euro"; a code without a name (one the API may not know), as it is. */
function option(code: string): string {
  const name = currencyName(code);
  return name === code ? code : `${code} – ${name}`;
}

/**
 * The currency a report's amounts are shown in, beside its period: the tenant's reporting currency
 * (GET /settings, for those who may read it; otherwise what the answer says it is in) or one chosen
 * for this view, which the page keeps in its address.
 */
export function CurrencyPicker({ value, onChange, shown, error, inline }: CurrencyPickerProps) {
  const admin = useCan()("account.admin");
  const settings = useQuery({ ...settingsQuery, enabled: admin });
  const reporting = settings.data?.reportingCurrency ?? (value === undefined ? shown : undefined);
  const choices = currencyChoices(value, reporting, settings.data?.defaultCurrency);
  return (
    <Field label="Currency" inline={inline ?? false} error={error}>
      {(props) => (
        <select
          {...props}
          className="currency-picker"
          value={value ?? ""}
          onChange={(e) => onChange(e.target.value === "" ? undefined : e.target.value)}
        >
          <option value="">{reporting ? `Reporting currency (${reporting})` : "Reporting currency"}</option>
          {choices.map((code) => (
            <option key={code} value={code}>
              {option(code)}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** The codes a currency field suggests (a `<datalist>` for its `list`): the common ones and `also`. */
export function CurrencyChoices({ id, also = [], except }: { id: string; also?: string[]; except?: string }) {
  return (
    <datalist id={id}>
      {currencyChoices(...also)
        .filter((code) => code !== except)
        .map((code) => (
          <option key={code} value={code}>
            {currencyName(code)}
          </option>
        ))}
    </datalist>
  );
}

/**
 * Amounts a report left out of its sums for want of an exchange rate (`meta.unconverted`), said
 * next to the totals, with the way to the settings where a rate is added. Nothing when none.
 */
export function UnconvertedNotice({ meta }: { meta: ReportMeta | undefined }) {
  if (!meta || meta.unconverted.length === 0) return null;
  const parts = meta.unconverted.map(
    ({ currency, conversions }, i) =>
      `${formatInteger(conversions)} ${i === 0 ? (conversions === 1 ? "conversion " : "conversions ") : ""}in ${currency}`,
  );
  return (
    <p className="notice warning unconverted" role="status" data-testid="unconverted">
      Left out of the totals in {meta.currency} for want of an exchange rate: {parts.join(", ")}. Add the rate under{" "}
      <Link to="/settings" hash="exchange-rates">
        Settings
      </Link>
      .
    </p>
  );
}
