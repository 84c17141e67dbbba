import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { api, unwrap } from "../../api/client";
import { ConfirmButton } from "../../components/ConfirmButton";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { ErrorState, Loading } from "../../components/states";
import { type SavedReportKind, savedReportsQuery } from "./queries";

type Kind = SavedReportKind;

interface SavedReport {
  id: string;
  name: string;
  params: Record<string, string>;
}

interface SavedReportsProps {
  kind: Kind;
  /** The report's current address parameters, as strings: what "Save" keeps. */
  current: Record<string, string>;
  /** Opens a saved report: its parameters become the address. */
  onOpen: (params: Record<string, string>) => void;
}

/**
 * Saved reports of one kind: save the report as it is now under a name, open one (its parameters
 * replace the address), rename or delete one. Stored by the API, shared with the tenant's people.
 */
export function SavedReports({ kind, current, onOpen }: SavedReportsProps) {
  const client = useQueryClient();
  const list = useQuery(savedReportsQuery(kind));
  const refresh = () => void client.invalidateQueries({ queryKey: savedReportsQuery(kind).queryKey });
  const [name, setName] = useState("");
  const [renaming, setRenaming] = useState<{ id: string; name: string } | undefined>();

  const save = useMutation({
    mutationFn: async (named: string) =>
      unwrap(api.POST("/api/v1/saved-reports", { body: { name: named, report: kind, params: current } })),
    onSuccess: () => {
      setName("");
      refresh();
    },
  });
  const rename = useMutation({
    mutationFn: async (next: { id: string; name: string }) =>
      unwrap(api.PATCH("/api/v1/saved-reports/{id}", { params: { path: { id: next.id } }, body: { name: next.name } })),
    onSuccess: () => {
      setRenaming(undefined);
      refresh();
    },
  });
  const remove = useMutation({
    mutationFn: async (id: string) => unwrap(api.DELETE("/api/v1/saved-reports/{id}", { params: { path: { id } } })),
    onSuccess: refresh,
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(name);
  };
  const submitRename = (event: FormEvent) => {
    event.preventDefault();
    if (renaming) rename.mutate(renaming);
  };

  const items: SavedReport[] = list.data ?? [];
  return (
    <section className="panel saved-reports" aria-labelledby="saved-title">
      <h2 id="saved-title">Saved reports</h2>
      <form onSubmit={submit} aria-label="Save this report">
        <Field label="Name" inline error={fieldError(save.error, "name")}>
          {(props) => (
            <input {...props} value={name} maxLength={100} onChange={(e) => setName(e.target.value)} required />
          )}
        </Field>
        <button type="submit" className="button secondary" disabled={save.isPending}>
          Save this report
        </button>
      </form>
      <FormError message={formError(save.error, ["name"])} />
      {list.isPending ? (
        <Loading label="Loading saved reports…" />
      ) : list.isError ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : items.length === 0 ? (
        <p className="muted small">None saved yet: name the report above to keep it.</p>
      ) : (
        <ul>
          {items.map((item) =>
            renaming?.id === item.id ? (
              <li key={item.id}>
                <form onSubmit={submitRename} aria-label={`Rename ${item.name}`}>
                  <Field label="New name" inline error={fieldError(rename.error, "name")}>
                    {(props) => (
                      <input
                        {...props}
                        value={renaming.name}
                        maxLength={100}
                        onChange={(e) => setRenaming({ id: item.id, name: e.target.value })}
                        required
                      />
                    )}
                  </Field>
                  <button type="submit" className="button secondary" disabled={rename.isPending}>
                    Rename
                  </button>
                  <button type="button" className="button secondary" onClick={() => setRenaming(undefined)}>
                    Cancel
                  </button>
                </form>
                <FormError message={formError(rename.error, ["name"])} />
              </li>
            ) : (
              <li key={item.id}>
                <span className="saved-name">{item.name}</span>
                <button type="button" className="button secondary" onClick={() => onOpen(item.params)}>
                  Open<span className="visually-hidden"> {item.name}</span>
                </button>
                <button
                  type="button"
                  className="button secondary"
                  onClick={() => {
                    rename.reset();
                    setRenaming({ id: item.id, name: item.name });
                  }}
                >
                  Rename<span className="visually-hidden"> {item.name}</span>
                </button>
                <ConfirmButton
                  label="Delete"
                  name={`Delete ${item.name}`}
                  question={`Delete the saved report “${item.name}”? The report itself is not affected.`}
                  onConfirm={() => remove.mutate(item.id)}
                  danger
                />
              </li>
            ),
          )}
        </ul>
      )}
      {remove.isError && <ErrorState error={remove.error} />}
    </section>
  );
}
