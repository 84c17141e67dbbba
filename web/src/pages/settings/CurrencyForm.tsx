import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { api, unwrap } from "../../api/client";
import { CurrencyChoices } from "../../components/Currency";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { invalidateReports } from "../../currency";
import { SETTINGS, type Settings } from "./queries";

/** Each currency setting of PATCH /api/v1/settings, as its form shows it. */
const SETTINGS_FORMS = {
  defaultCurrency: {
    title: "Default currency",
    label: "Currency code",
    hint: () =>
      "ISO 4217, such as USD or EUR: the currency of a conversion value sent without one, by postback or API.",
    /** What the field holds: the stored code. */
    value: (s: Settings) => s.defaultCurrency,
    saved: (s: Settings) => `Saved: conversion values without a currency are now recorded in ${s.defaultCurrency}.`,
    /** An empty field: not sent as a reset, the API's refusal names the field. */
    clears: false,
  },
  reportingCurrency: {
    title: "Reporting currency",
    label: "Reporting currency",
    hint: (s: Settings) =>
      `ISO 4217: the currency reports show amounts in, each converted at the rate of its day. Empty: the default currency (${s.defaultCurrency}).`,
    value: (s: Settings) => (s.reportingCurrencyFollowsDefault ? "" : s.reportingCurrency),
    saved: (s: Settings) =>
      `Saved: reports now show amounts in ${s.reportingCurrency}${s.reportingCurrencyFollowsDefault ? ", the default currency" : ""}.`,
    /** An empty field goes back to following the default currency (`null`). */
    clears: true,
  },
} as const;

/**
 * One currency setting (PATCH /api/v1/settings): the default currency of conversion values, or
 * the currency reports are in. Either change makes every report's amounts stale.
 */
export function CurrencyForm({ setting, settings }: { setting: keyof typeof SETTINGS_FORMS; settings: Settings }) {
  const form = SETTINGS_FORMS[setting];
  const queryClient = useQueryClient();
  const [code, setCode] = useState(form.value(settings));
  const [saved, setSaved] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: async (value: string | null) =>
      (await unwrap(api.PATCH("/api/v1/settings", { body: { [setting]: value } }))).data,
    onSuccess: (answer) => {
      queryClient.setQueryData(SETTINGS, answer);
      // A reporting currency that follows the default follows a new default too.
      void invalidateReports(queryClient);
      setCode(form.value(answer));
      setSaved(form.saved(answer));
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(null);
    const trimmed = code.trim();
    save.mutate(trimmed === "" && form.clears ? null : trimmed);
  };
  const titleId = `${setting}-title`;
  const choicesId = `${setting}-choices`;
  return (
    <form onSubmit={submit} noValidate aria-labelledby={titleId}>
      <h2 id={titleId}>{form.title}</h2>
      <Field label={form.label} hint={form.hint(settings)} error={fieldError(save.error, setting)}>
        {(props) => (
          <input
            {...props}
            className="currency-input"
            value={code}
            list={choicesId}
            placeholder={form.clears ? settings.defaultCurrency : undefined}
            onChange={(e) => setCode(e.target.value)}
            autoComplete="off"
            spellCheck={false}
          />
        )}
      </Field>
      <CurrencyChoices id={choicesId} also={[settings.defaultCurrency]} />
      <FormError message={formError(save.error, [setting])} />
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
