import { type ChangeEvent, type KeyboardEvent, useEffect, useId, useMemo, useState } from "react";
import { browserTimeZone, listedSpelling, zoneChoices } from "../time-zones";
import { Field } from "./Field";

interface TimeZonePickerProps {
  /** The zone in the page's address; undefined: the account's (the `timeZone` setting). */
  value: string | undefined;
  onChange: (zone: string | undefined) => void;
  /** The account's zone, the default; undefined while it is not known. */
  accountZone: string | undefined;
  /** The API's message for the `timeZone` parameter. */
  error?: string | undefined;
  inline?: boolean;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The zone a page's periods are days of, beside the period: the account's unless one is chosen
 * for this view, which the page keeps in its address. A text field over the whole IANA list (a
 * datalist: typing part of a name narrows it), the account's zone, this browser's and UTC first.
 * Focused, it empties so the list shows every zone; a choice from the list or Enter applies, and
 * leaving it without one puts the zone shown back.
 */
export function TimeZonePicker({ value, onChange, accountZone, error, inline }: TimeZonePickerProps) {
  const current = value ?? accountZone ?? "";
  const [text, setText] = useState(current);
  const [editing, setEditing] = useState(false);
  useEffect(() => {
    if (!editing) setText(current);
  }, [current, editing]);
  const listId = useId();
  const choices = useMemo(() => zoneChoices(accountZone, browserTimeZone()), [accountZone]);

  function apply(typed: string) {
    setEditing(false);
    const name = typed.trim();
    if (name === "") return setText(current);
    const zone = listedSpelling(name);
    setText(zone);
    // The account's own zone is the default: the address drops it, and follows the setting.
    if (accountZone !== undefined && same(zone, accountZone)) {
      if (value !== undefined) onChange(undefined);
    } else if (value === undefined || !same(zone, value)) {
      onChange(zone);
    }
  }

  function change(event: ChangeEvent<HTMLInputElement>) {
    setText(event.target.value);
    // A pick from the list replaces the text at once (no keystroke): that is a choice made.
    const native = event.nativeEvent;
    if (!(native instanceof InputEvent) || native.inputType === "insertReplacementText") apply(event.target.value);
  }

  function key(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === "Enter") {
      event.preventDefault();
      apply(text);
    } else if (event.key === "Escape") {
      setEditing(false);
      setText(current);
    }
  }

  function leave() {
    if (!editing) return;
    // A whole name typed counts; a part of one would name another zone, or none.
    const listed = choices.some((c) => same(c.zone, text.trim()));
    if (listed) apply(text);
    else {
      setEditing(false);
      setText(current);
    }
  }

  const hint = inline
    ? undefined
    : accountZone === undefined || value === undefined
      ? "The account's time zone. Type to find another."
      : `Chosen for this view; the account's is ${accountZone}.`;
  return (
    <Field label="Time zone" inline={inline ?? false} error={error} hint={hint}>
      {(props) => (
        <>
          <input
            {...props}
            className="time-zone-picker"
            value={text}
            list={listId}
            placeholder={current}
            onFocus={() => {
              // Empty, the list offers every zone; a datalist shows only those matching the text.
              setEditing(true);
              setText("");
            }}
            onChange={change}
            onKeyDown={key}
            onBlur={leave}
            autoComplete="off"
            spellCheck={false}
          />
          <ZoneList id={listId} choices={choices} />
        </>
      )}
    </Field>
  );
}

/** The picker's list: the suggestions first, said why, then every zone this browser lists. */
function ZoneList({ id, choices }: { id: string; choices: ReturnType<typeof zoneChoices> }) {
  return (
    <datalist id={id}>
      {choices.map((choice) => (
        <option key={choice.zone} value={choice.zone} label={choice.note} />
      ))}
    </datalist>
  );
}
