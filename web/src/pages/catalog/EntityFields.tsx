import { useQuery } from "@tanstack/react-query";
import { useId, useMemo } from "react";
import { Field } from "../../components/Field";
import { SearchPicker } from "../../components/SearchPicker";
import { type PickerSource, shownLabel } from "../../components/SearchPickerModel";
import { messageOf } from "../../components/states";
import { formatInteger } from "../../format";
import { ENTITIES, type EntityKey, type FieldSpec } from "./entities";
import type { FormValue } from "./form-values";
import { catalogPicker } from "./picker-sources";
import { type CatalogRow, OPTIONS_LIMIT, optionsQuery } from "./queries";

interface ControlProps {
  field: FieldSpec;
  value: FormValue;
  onChange: (value: FormValue) => void;
  /** The API's message for this field. */
  error: string | undefined;
}

/** One field of a catalog form: its control, hint and the API's message for it. */
export function EntityField(props: ControlProps) {
  const { field } = props;
  if (field.kind === "refs" && field.ref) return <RefsField {...props} entity={field.ref} />;
  if (field.kind === "ref" && field.ref) return <RefField {...props} entity={field.ref} />;
  const text = typeof props.value === "string" ? props.value : "";
  return (
    <Field label={field.label} hint={field.hint} error={props.error}>
      {(control) =>
        field.kind === "choice" ? (
          <select {...control} name={field.name} value={text} onChange={(e) => props.onChange(e.target.value)}>
            {field.choices?.map((choice) => (
              <option key={choice} value={choice}>
                {choice}
              </option>
            ))}
          </select>
        ) : (
          <input
            {...control}
            name={field.name}
            type={field.kind === "url" ? "url" : "text"}
            inputMode={field.kind === "url" ? "url" : undefined}
            value={text}
            onChange={(e) => props.onChange(e.target.value)}
            className={field.kind === "url" ? "catalog-wide-input" : undefined}
            autoComplete="off"
          />
        )
      }
    </Field>
  );
}

/** When the checkboxes cannot list every row, they say where the others are (the API's largest page is the limit). */
function optionsHint(entity: EntityKey, total: number | undefined): string | undefined {
  if (total === undefined || total <= OPTIONS_LIMIT) return undefined;
  const plural = ENTITIES[entity].plural.toLowerCase();
  return `The first ${formatInteger(OPTIONS_LIMIT)} of ${formatInteger(total)} ${plural} are listed; find any other below.`;
}

/** The rows listed, after the chosen ones beyond the first page (first, so they are seen; named by ChosenName). */
function withChosen(rows: CatalogRow[], chosen: string[]): { value: string; label: string | undefined }[] {
  const listed = rows.map((row) => ({ value: String(row.id), label: row.name as string | undefined }));
  const beyond = chosen
    .filter((id) => id !== "" && !listed.some((o) => o.value === id))
    .map((id) => ({ value: id, label: undefined }));
  return [...beyond, ...listed];
}

/** A chosen row the first page does not hold, read by id for its name. */
function ChosenName({ source, id }: { source: PickerSource; id: string }) {
  const row = useQuery({ queryKey: [...source.key, "one", Number(id)], queryFn: () => source.one(Number(id)) });
  return <>{row.data ? shownLabel(row.data) : `#${id}`}</>;
}

function RefField({ field, value, onChange, error, entity }: ControlProps & { entity: EntityKey }) {
  return (
    <RowSelect
      label={field.label}
      entity={entity}
      value={typeof value === "string" ? value : ""}
      onChange={onChange}
      error={error}
      none={`Choose a ${field.label.toLowerCase()}`}
      hint={field.hint}
    />
  );
}

interface RowSelectProps {
  label: string;
  entity: EntityKey;
  /** The chosen row's id, "" for none (or `extra`'s value). */
  value: string;
  onChange: (value: string) => void;
  error?: string | undefined;
  /** The empty choice's text. */
  none: string;
  hint?: string | undefined;
  /** A choice besides the rows (the link generator's "a new tracker"). */
  extra?: { value: string; label: string };
}

/** One row of a catalog list, found by typing (a form's pointer, a list filter, the link generator). */
export function RowSelect({ label, entity, value, onChange, error, none, hint, extra }: RowSelectProps) {
  const source = useMemo(() => catalogPicker(entity), [entity]);
  const chosenExtra = extra !== undefined && value === extra.value;
  return (
    <SearchPicker
      label={label}
      source={source}
      value={value === "" || chosenExtra ? undefined : Number(value)}
      onChange={(id) => onChange(id === undefined ? "" : String(id))}
      none={none}
      extra={extra && { label: extra.label, chosen: chosenExtra, onChoose: () => onChange(extra.value) }}
      hint={hint}
      error={error}
    />
  );
}

/** Several rows of another list, as checkboxes in a labelled group. */
function RefsField({ field, value, onChange, error, entity }: ControlProps & { entity: EntityKey }) {
  const id = useId();
  const options = useQuery(optionsQuery(entity));
  const chosen = Array.isArray(value) ? value : [];
  const hint = options.isError
    ? messageOf(options.error)
    : (optionsHint(entity, options.data?.page.total) ?? field.hint);
  const toggle = (option: string, on: boolean) =>
    onChange(on ? [...chosen, option] : chosen.filter((other) => other !== option));
  const list = withChosen(options.data?.rows ?? [], chosen);
  const source = useMemo(() => catalogPicker(entity), [entity]);
  // More rows than the checkboxes list: the others are found by typing, and join the list checked.
  const more = (options.data?.page.total ?? 0) > OPTIONS_LIMIT;
  return (
    <fieldset
      className="field catalog-refs"
      aria-describedby={[hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined}
    >
      <legend>{field.label}</legend>
      {options.isPending ? (
        <p className="muted">Loading…</p>
      ) : list.length === 0 ? (
        <p className="muted">None to choose yet.</p>
      ) : (
        <ul className="catalog-refs-list">
          {list.map((option) => (
            <li key={option.value}>
              <label>
                <input
                  type="checkbox"
                  name={field.name}
                  value={option.value}
                  checked={chosen.includes(option.value)}
                  onChange={(e) => toggle(option.value, e.target.checked)}
                />{" "}
                {option.label ?? <ChosenName source={source} id={option.value} />}
              </label>
            </li>
          ))}
        </ul>
      )}
      {more && (
        <SearchPicker
          label={`Add a ${ENTITIES[entity].singular.toLowerCase()} not listed`}
          source={source}
          value={undefined}
          onChange={(picked) => {
            if (picked !== undefined && !chosen.includes(String(picked))) onChange([...chosen, String(picked)]);
          }}
        />
      )}
      {hint && (
        <p id={`${id}-hint`} className="muted small">
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}
