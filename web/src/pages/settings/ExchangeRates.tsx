import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { ApiFailure, api, unwrap } from "../../api/client";
import { CurrencyChoices } from "../../components/Currency";
import { type Column, DataTable } from "../../components/DataTable";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { ErrorState, Loading } from "../../components/states";
import { invalidateReports } from "../../currency";
import { today } from "../../dates";
import { currencyName } from "../../format";

import { exchangeRatesQuery, RATES } from "./queries";

interface RateRow {
  code: string;
  rate: number;
  source: "tenant" | "reference";
}

const rateFormat = new Intl.NumberFormat("en-US", { maximumFractionDigits: 10 });

const COLUMNS: Column<RateRow>[] = [
  {
    key: "code",
    label: "Currency",
    cell: (r) => (
      <>
        <strong>{r.code}</strong> <span className="muted small">{currencyName(r.code)}</span>
      </>
    ),
  },
  { key: "rate", label: "Units per 1 EUR", numeric: true, cell: (r) => rateFormat.format(r.rate) },
  {
    key: "source",
    label: "Source",
    cell: (r) =>
      r.code === "EUR" ? "Base: always 1" : r.source === "tenant" ? "This account's rate" : "ECB reference rate",
  },
];

/**
 * A refusal of `rates.<code>` names the code or the rate: the API's message about the code
 * (not ISO 4217, or EUR, which is always 1) shows beside the currency, any other beside the rate.
 */
function rateErrors(error: unknown): { code?: string; rate?: string } {
  if (!(error instanceof ApiFailure)) return {};
  const found = error.fieldErrors.find((e) => e.path === "rates" || e.path.startsWith("rates."));
  if (!found) return {};
  return /currency|EUR/.test(found.message) ? { code: found.message } : { rate: found.message };
}

/**
 * The exchange rates in force today (GET /api/v1/exchange-rates), as reports convert amounts with
 * them, and for an account admin the form to add the tenant's own rate of a day (PUT).
 */
export function ExchangeRates({ canChange }: { canChange: boolean }) {
  const rates = useQuery(exchangeRatesQuery);
  const rows: RateRow[] = rates.data
    ? Object.entries(rates.data.rates).map(([code, rate]) => ({
        code,
        rate,
        source: rates.data.sources[code] ?? "reference",
      }))
    : [];
  return (
    <section className="panel" id="exchange-rates" aria-labelledby="rates-title">
      <h2 id="rates-title">Exchange rates</h2>
      <p>
        Reports convert each amount at the rate in force on its day: for each currency the latest rate dated on or
        before it, your own or the European Central Bank's reference rate (the later wins; on the same day, yours). An
        amount whose currency has no rate is left out of the totals, and the report says so.
      </p>
      {rates.isPending ? (
        <Loading label="Loading the exchange rates…" />
      ) : rates.isError ? (
        <ErrorState error={rates.error} onRetry={() => void rates.refetch()} />
      ) : (
        <div className="rates-table">
          <DataTable
            caption={`Exchange rates in force on ${rates.data.date} (UTC), in units per 1 EUR`}
            columns={COLUMNS}
            rows={rows}
            rowKey={(r) => r.code}
            empty="No exchange rates yet."
          />
          <p className="muted small">In force on {rates.data.date} (UTC).</p>
        </div>
      )}
      {canChange && <AddRateForm />}
    </section>
  );
}

/** The tenant's own rate of one currency on one day: units per 1 EUR, in force from that day. */
function AddRateForm() {
  const queryClient = useQueryClient();
  const [date, setDate] = useState(today());
  const [code, setCode] = useState("");
  const [rate, setRate] = useState("");
  const [problem, setProblem] = useState<{ code?: string; rate?: string }>({});
  const [saved, setSaved] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: async (body: { date: string; rates: Record<string, number> }) =>
      (await unwrap(api.PUT("/api/v1/exchange-rates", { body }))).data,
    onSuccess: (answer, body) => {
      const [[sent, value] = ["", 0]] = Object.entries(body.rates);
      const shown = sent.toUpperCase();
      setSaved(`Saved: 1 EUR = ${rateFormat.format(value)} ${shown} from ${answer.date}.`);
      setCode("");
      setRate("");
      void queryClient.invalidateQueries({ queryKey: RATES });
      void invalidateReports(queryClient);
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    setSaved(null);
    save.reset();
    // Only what cannot be sent is checked here; every other refusal is the API's.
    const next = {
      ...(code.trim() === "" ? { code: "Enter a currency code, such as JPY." } : {}),
      ...(rate.trim() === "" || Number.isNaN(Number(rate))
        ? { rate: "Enter the rate: how many units of the currency 1 EUR buys." }
        : {}),
    };
    setProblem(next);
    if (next.code || next.rate) return;
    save.mutate({ date, rates: { [code.trim()]: Number(rate) } });
  }

  const refused = rateErrors(save.error);
  return (
    <form className="add-rate" onSubmit={submit} noValidate aria-labelledby="add-rate-title">
      <h3 id="add-rate-title">Add a rate</h3>
      <p className="muted small">
        Your own rate wins over the reference rate of the same day, and applies to every report from that day on, past
        days included, until a later rate.
      </p>
      <div className="add-rate-fields">
        <Field label="Day" error={fieldError(save.error, "date")}>
          {(props) => <input {...props} type="date" value={date} onChange={(e) => setDate(e.target.value)} />}
        </Field>
        <Field label="Currency" error={problem.code ?? refused.code}>
          {(props) => (
            <input
              {...props}
              className="currency-input"
              value={code}
              list="rate-currency-choices"
              onChange={(e) => setCode(e.target.value)}
              autoComplete="off"
              spellCheck={false}
            />
          )}
        </Field>
        <Field label="Rate per 1 EUR" error={problem.rate ?? refused.rate}>
          {(props) => (
            <input
              {...props}
              type="number"
              inputMode="decimal"
              min="0"
              step="any"
              value={rate}
              onChange={(e) => setRate(e.target.value)}
            />
          )}
        </Field>
      </div>
      <CurrencyChoices id="rate-currency-choices" except="EUR" />
      <FormError message={formError(save.error, ["date", "rates"])} />
      {saved && (
        <p className="notice" role="status">
          {saved}
        </p>
      )}
      <p className="actions">
        <button type="submit" className="button primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Add rate"}
        </button>
      </p>
    </form>
  );
}
