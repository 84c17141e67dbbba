import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { type KeyboardEvent, type ReactNode, useEffect, useId, useState } from "react";
import { formatInteger } from "../format";
import { Field } from "./Field";
import {
  movedIndex,
  PICKER_DEBOUNCE_MS,
  PICKER_PAGE,
  type PickerOption,
  type PickerSource,
  shownLabel,
} from "./SearchPickerModel";
import { messageOf } from "./states";
import "./SearchPicker.css";

interface SearchPickerProps {
  label: string;
  source: PickerSource;
  /** The chosen row's id; undefined for none (or while `extra` is chosen). */
  value: number | undefined;
  onChange: (id: number | undefined) => void;
  /** The choice of no row ("Any", "No tracker"); without it a row must be chosen. */
  none?: string | undefined;
  /** One more fixed choice after `none` (the link generator's "A new tracker…"). */
  extra?: { label: string; chosen: boolean; onChoose: () => void } | undefined;
  hint?: ReactNode | undefined;
  error?: string | undefined;
}

type Choice = { kind: "none" } | { kind: "extra" } | { kind: "row"; option: PickerOption };

/**
 * One row of a long list, found by typing: a combobox (ARIA practice: an input that owns a
 * listbox) whose matches come from the list route's `search`, a page at a time. The chosen row is
 * read by id, so its label shows even when no page read holds it.
 */
export function SearchPicker({ label, source, value, onChange, none, extra, hint, error }: SearchPickerProps) {
  const client = useQueryClient();
  const listId = useId();
  const [open, setOpen] = useState(false);
  const [text, setText] = useState("");
  const [term, setTerm] = useState("");
  const [active, setActive] = useState(-1);

  useEffect(() => {
    const timer = setTimeout(() => setTerm(text.trim()), PICKER_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [text]);

  const chosen = useQuery({
    queryKey: [...source.key, "one", value],
    queryFn: () => source.one(value ?? 0),
    enabled: value !== undefined,
    retry: false,
  });
  const matches = useInfiniteQuery({
    queryKey: [...source.key, "search", term],
    queryFn: ({ pageParam }) => source.search(term, pageParam, PICKER_PAGE),
    initialPageParam: 0,
    getNextPageParam: (last, pages) => {
      const read = pages.reduce((n, page) => n + page.options.length, 0);
      return read < last.total ? read : undefined;
    },
    enabled: open,
  });

  const current = extra?.chosen
    ? extra.label
    : value === undefined
      ? (none ?? "")
      : chosen.data
        ? shownLabel(chosen.data)
        : chosen.isError
          ? `#${value}`
          : "Loading…";
  useEffect(() => {
    if (!open) setText(current);
  }, [current, open]);

  const rows = matches.data?.pages.flatMap((page) => page.options) ?? [];
  const total = matches.data?.pages.at(-1)?.total;
  const choices: Choice[] = [
    ...(none !== undefined ? [{ kind: "none" } as const] : []),
    ...(extra ? [{ kind: "extra" } as const] : []),
    ...rows.map((option) => ({ kind: "row", option }) as const),
  ];
  const optionId = (index: number) => `${listId}-option-${index}`;

  useEffect(() => {
    if (open && active >= 0)
      document.getElementById(`${listId}-option-${active}`)?.scrollIntoView({ block: "nearest" });
  }, [open, active, listId]);

  function start() {
    if (open) return;
    setOpen(true);
    setTerm("");
    setActive(-1);
  }

  function close() {
    setOpen(false);
    setActive(-1);
    setText(current);
  }

  function choose(choice: Choice) {
    if (choice.kind === "extra") {
      setText(extra?.label ?? "");
      extra?.onChoose();
    } else if (choice.kind === "none") {
      setText(none ?? "");
      onChange(undefined);
    } else {
      // Seed the by-id read: the closed picker keeps showing the label without asking again.
      client.setQueryData([...source.key, "one", choice.option.id], choice.option);
      setText(shownLabel(choice.option));
      onChange(choice.option.id);
    }
    setOpen(false);
    setActive(-1);
  }

  function key(event: KeyboardEvent<HTMLInputElement>) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (!open) return start();
      if (event.key === "ArrowDown" && active === choices.length - 1 && matches.hasNextPage) {
        void matches.fetchNextPage();
      }
      setActive(movedIndex(event.key, active, choices.length));
    } else if ((event.key === "Home" || event.key === "End") && open && event.altKey) {
      event.preventDefault();
      setActive(movedIndex(event.key, active, choices.length));
    } else if (event.key === "Enter" && open) {
      event.preventDefault();
      const choice = choices[active] ?? (choices.length === 1 ? choices[0] : undefined);
      if (choice) choose(choice);
    } else if (event.key === "Escape" && open) {
      event.preventDefault();
      close();
    }
  }

  const status = !open
    ? ""
    : matches.isError
      ? `The list could not be read: ${messageOf(matches.error)}`
      : matches.isPending
        ? "Searching…"
        : total === 0
          ? "No match."
          : `${formatInteger(rows.length)} of ${formatInteger(total ?? rows.length)} shown`;

  return (
    <Field label={label} hint={hint} error={error}>
      {(control) => (
        <div className="search-picker">
          <input
            {...control}
            type="text"
            role="combobox"
            aria-expanded={open}
            aria-controls={listId}
            aria-autocomplete="list"
            aria-activedescendant={open && active >= 0 ? optionId(active) : undefined}
            autoComplete="off"
            spellCheck={false}
            placeholder="Type to search"
            // A long label (a brand link's brand and account) may not fit the field: whole on hover.
            title={open ? undefined : current}
            value={text}
            onFocus={(event) => {
              start();
              event.target.select();
            }}
            onClick={start}
            onChange={(event) => {
              start();
              setText(event.target.value);
              setActive(-1);
            }}
            onKeyDown={key}
            onBlur={() => {
              if (open) close();
            }}
          />
          <div className="search-picker-popup" hidden={!open}>
            <div id={listId} role="listbox" aria-label={label} className="search-picker-list">
              {open &&
                choices.map((choice, index) => {
                  const selected =
                    choice.kind === "none"
                      ? value === undefined && !extra?.chosen
                      : choice.kind === "extra"
                        ? extra?.chosen === true
                        : choice.option.id === value && !extra?.chosen;
                  return (
                    // The keys are the input's (aria-activedescendant, ARIA combobox practice): an
                    // option takes no focus of its own and needs no key handler.
                    // biome-ignore lint/a11y/useKeyWithClickEvents: Enter on the input chooses the active option
                    <div
                      key={choice.kind === "row" ? choice.option.id : choice.kind}
                      id={optionId(index)}
                      role="option"
                      tabIndex={-1}
                      aria-selected={selected}
                      className={index === active ? "active" : undefined}
                      // Keeps the focus in the input: a tap or click chooses without a blur first.
                      onMouseDown={(event) => event.preventDefault()}
                      onClick={() => choose(choice)}
                    >
                      {choice.kind === "none" ? (
                        none
                      ) : choice.kind === "extra" ? (
                        extra?.label
                      ) : (
                        <>
                          {choice.option.label}
                          {choice.option.detail && <span className="muted small"> {choice.option.detail}</span>}
                        </>
                      )}
                    </div>
                  );
                })}
            </div>
            <div className="search-picker-foot">
              <p className="muted small" role="status">
                {status}
              </p>
              {open && matches.hasNextPage && (
                <button
                  type="button"
                  className="button secondary small"
                  tabIndex={-1}
                  disabled={matches.isFetchingNextPage}
                  onMouseDown={(event) => event.preventDefault()}
                  onClick={() => void matches.fetchNextPage()}
                >
                  More matches
                </button>
              )}
            </div>
          </div>
        </div>
      )}
    </Field>
  );
}
