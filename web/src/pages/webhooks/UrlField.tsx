import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { Field } from "../../components/Field";
import { messageOf } from "../../components/states";
import { placeholdersQuery, urlCheckQuery } from "./queries";
import { insertToken, SYNTAXES, type SyntaxId, tokenFor } from "./template";

/** How long typing must pause before the URL is checked, so the API is not asked at every key. */
export const CHECK_DELAY_MS = 400;

function useSettled<T>(value: T, delayMs: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}

/**
 * The URL template, checked by the API as it is typed (POST settings/validate): its refusal,
 * naming the placeholder or host at fault, shows under the field; so does a refusal of the last
 * save (`saveError`, given while the URL is the one sent). The placeholder names come from the API.
 */
export function UrlField({
  value,
  onChange,
  saveError,
}: {
  value: string;
  onChange: (url: string) => void;
  saveError: string | undefined;
}) {
  const input = useRef<HTMLInputElement>(null);
  const settled = useSettled(value, CHECK_DELAY_MS);
  const check = useQuery({ ...urlCheckQuery(settled), enabled: settled.trim() !== "" });
  const [syntax, setSyntax] = useState<SyntaxId>("braces");
  const current = settled === value && check.data && !check.isFetching ? check.data : undefined;

  const error = saveError
    ? saveError
    : current && !current.valid
      ? current.message
      : check.isError
        ? `The URL could not be checked: ${messageOf(check.error)}`
        : undefined;

  const insert = (name: string) => {
    const element = input.current;
    const start = element?.selectionStart ?? value.length;
    const end = element?.selectionEnd ?? value.length;
    const next = insertToken(value, start, end, tokenFor(syntax, name));
    onChange(next.text);
    requestAnimationFrame(() => {
      element?.focus();
      element?.setSelectionRange(next.caret, next.caret);
    });
  };

  return (
    <>
      <Field
        label="URL template"
        error={error}
        hint={
          current?.valid ? (
            <span className="url-check ok" data-testid="url-check">
              {current.message}. A conversion would be sent to <code>{current.sampleUrl}</code>
            </span>
          ) : (
            "An absolute http or https address; placeholders fill in each conversion's values."
          )
        }
      >
        {(props) => (
          <input
            {...props}
            ref={input}
            type="text"
            name="url"
            required
            maxLength={4096}
            spellCheck={false}
            autoComplete="off"
            value={value}
            onChange={(event) => onChange(event.target.value)}
          />
        )}
      </Field>
      <PlaceholderHelp syntax={syntax} onSyntax={setSyntax} onInsert={insert} />
    </>
  );
}

/** The placeholder names (the API's, then `extra`: a traffic source's postback adds its own), each inserted on a click. */
export function PlaceholderHelp({
  syntax,
  onSyntax,
  onInsert,
  extra = [],
}: {
  syntax: SyntaxId;
  onSyntax: (syntax: SyntaxId) => void;
  onInsert: (name: string) => void;
  extra?: readonly string[];
}) {
  const placeholders = useQuery(placeholdersQuery);
  const names = [
    ...(placeholders.data ?? []),
    ...extra
      .filter((n) => !placeholders.data?.some((p) => p.name === n))
      .map((name) => ({ name, simulateOnly: false })),
  ];
  return (
    <details className="placeholder-help">
      <summary>Placeholders</summary>
      <p className="small">
        Names are case-insensitive. <code>{tokenFor("dollar", "name")}</code> and{" "}
        <code>{tokenFor("braces", "name")}</code> insert the value URL-encoded, <code>{tokenFor("raw", "name")}</code>{" "}
        as it is. No placeholder may stand in the scheme, user info, host or port: write the address out in full. A
        value a conversion does not have is empty; names in dashed boxes are filled only by Simulate.
      </p>
      <fieldset className="choices">
        <legend>Insert as</legend>
        {SYNTAXES.map((s) => (
          <label key={s.id}>
            <input type="radio" name="syntax" checked={syntax === s.id} onChange={() => onSyntax(s.id)} /> {s.label}
          </label>
        ))}
      </fieldset>
      {placeholders.isError ? (
        <p className="field-error">{messageOf(placeholders.error)}</p>
      ) : (
        <ul className="placeholder-list" aria-label="Placeholder names">
          {names.map((p) => (
            <li key={p.name}>
              <button
                type="button"
                className={p.simulateOnly ? "simulate-only" : undefined}
                aria-label={`Insert ${p.name}${p.simulateOnly ? " (filled only by Simulate)" : ""}`}
                onClick={() => onInsert(p.name)}
              >
                {p.name}
              </button>
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}
