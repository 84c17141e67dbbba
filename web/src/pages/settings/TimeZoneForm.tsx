import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useMemo, useState } from "react";
import { accountTimeZoneProbeQuery } from "../../account-time-zone";
import { api, unwrap } from "../../api/client";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { browserTimeZone, zoneChoices } from "../../time-zones";
import { SETTINGS, type Settings } from "./queries";

/**
 * The account's time zone (PATCH /api/v1/settings `timeZone`): the zone reports, the conversions
 * list's dates and the usage series read days in, unless a page picks another. The API takes any
 * case and answers the name's canonical spelling, which the field then shows.
 */
export function TimeZoneForm({ settings }: { settings: Settings }) {
  const queryClient = useQueryClient();
  const [zone, setZone] = useState(settings.timeZone);
  const [saved, setSaved] = useState<string | null>(null);
  const browser = browserTimeZone();
  const choices = useMemo(() => zoneChoices(settings.timeZone, browser), [settings.timeZone, browser]);
  const save = useMutation({
    mutationFn: async (timeZone: string) => (await unwrap(api.PATCH("/api/v1/settings", { body: { timeZone } }))).data,
    onSuccess: (answer) => {
      queryClient.setQueryData(SETTINGS, answer);
      // Pages that follow the setting ask in the new zone (it is part of their queries' keys);
      // what others learned of the setting from a report is asked again.
      void queryClient.invalidateQueries({ queryKey: accountTimeZoneProbeQuery.queryKey });
      setZone(answer.timeZone);
      setSaved(`Saved: reports now read days in ${answer.timeZone}.`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(null);
    save.mutate(zone.trim());
  };
  return (
    <form onSubmit={submit} noValidate aria-labelledby="time-zone-title">
      <h2 id="time-zone-title">Time zone</h2>
      <Field
        label="Time zone"
        hint="An IANA name, such as Europe/Berlin or America/New_York. Reports, the conversions list's dates and the usage series read days in it, unless a page picks another zone."
        error={fieldError(save.error, "timeZone")}
      >
        {(props) => (
          <input
            {...props}
            className="time-zone-input"
            value={zone}
            list="time-zone-choices"
            onChange={(e) => setZone(e.target.value)}
            autoComplete="off"
            spellCheck={false}
          />
        )}
      </Field>
      <datalist id="time-zone-choices">
        {choices.map((choice) => (
          <option key={choice.zone} value={choice.zone} label={choice.note} />
        ))}
      </datalist>
      {browser !== zone.trim() && (
        <p className="small">
          <button type="button" className="link-button" onClick={() => setZone(browser)}>
            Use this browser's time zone ({browser})
          </button>
        </p>
      )}
      <FormError message={formError(save.error, ["timeZone"])} />
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
