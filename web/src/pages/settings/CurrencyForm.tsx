import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { api, unwrap } from "../../api/client";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { SETTINGS } from "./queries";

/** The currency a conversion value sent without one is recorded in (PATCH /api/v1/settings). */
export function CurrencyForm({ current }: { current: string }) {
  const queryClient = useQueryClient();
  const [code, setCode] = useState(current);
  const [saved, setSaved] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: async (defaultCurrency: string) =>
      (await unwrap(api.PATCH("/api/v1/settings", { body: { defaultCurrency } }))).data,
    onSuccess: (settings) => {
      queryClient.setQueryData(SETTINGS, settings);
      setCode(settings.defaultCurrency);
      setSaved(`Saved: conversion values without a currency are now recorded in ${settings.defaultCurrency}.`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(null);
    save.mutate(code.trim());
  };
  return (
    <form onSubmit={submit} noValidate aria-labelledby="currency-title">
      <h2 id="currency-title">Default currency</h2>
      <Field
        label="Currency code"
        hint="ISO 4217, such as USD or EUR: the currency of a conversion value sent without one, by postback or API."
        error={fieldError(save.error, "defaultCurrency")}
      >
        {(props) => (
          <input
            {...props}
            className="currency-input"
            value={code}
            onChange={(e) => setCode(e.target.value)}
            autoComplete="off"
            spellCheck={false}
          />
        )}
      </Field>
      <FormError message={formError(save.error, ["defaultCurrency"])} />
      {saved && (
        <p className="notice" role="status">
          {saved}
        </p>
      )}
      <p className="actions">
        <button type="submit" className="button primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Save"}
        </button>
      </p>
    </form>
  );
}
