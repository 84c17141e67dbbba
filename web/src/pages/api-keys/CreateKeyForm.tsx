import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { api, unwrap } from "../../api/client";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { ErrorState, Loading } from "../../components/states";
import { KEYS, scopesQuery } from "./queries";

export interface CreatedKey {
  name: string;
  token: string;
}

const FIELDS = ["name", "expirationDate", "scopes"] as const;

/** A chosen day as the API's instant: the key stops working at the start of that day, UTC. */
const expiryOf = (day: string) => (day === "" ? {} : { expirationDate: `${day}T00:00:00.000Z` });

/**
 * Creates a key with the scopes the person may grant (GET /api-tokens/scopes). The raw key goes
 * to `onCreated` and nowhere else: the mutation is forgotten at once, so no cache keeps it.
 */
export function CreateKeyForm({
  onCreated,
  onCancel,
  initialScopes = [],
}: {
  onCreated: (key: CreatedKey) => void;
  onCancel: () => void;
  /** Checked at first; one the person may not grant is neither shown nor sent. */
  initialScopes?: readonly string[];
}) {
  const queryClient = useQueryClient();
  const scopes = useQuery(scopesQuery);
  const [name, setName] = useState("");
  const [expiry, setExpiry] = useState("");
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set(initialScopes));
  const create = useMutation({
    gcTime: 0,
    mutationFn: async () =>
      (
        await unwrap(
          api.POST("/api/v1/api-tokens", {
            body: {
              name: name.trim(),
              ...expiryOf(expiry),
              scopes: [...chosen].filter((s) => scopes.data?.includes(s)),
            },
          }),
        )
      ).data,
    onSuccess: (created) => {
      create.reset();
      void queryClient.invalidateQueries({ queryKey: KEYS });
      onCreated({ name: created.name, token: created.token });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const toggle = (scope: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(scope);
    else next.delete(scope);
    setChosen(next);
  };

  return (
    <form className="form-panel" onSubmit={submit} noValidate aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create an API key</h2>
      <Field
        label="Name"
        hint="At least 4 characters, different from every other key's name."
        error={fieldError(create.error, "name")}
      >
        {(props) => (
          <input {...props} value={name} onChange={(e) => setName(e.target.value)} autoComplete="off" required />
        )}
      </Field>
      <Field
        label="Expires on (UTC)"
        hint="The key stops working at 00:00 UTC that day. Empty: one year from now, the longest allowed."
        error={fieldError(create.error, "expirationDate")}
      >
        {(props) => <input {...props} type="date" value={expiry} onChange={(e) => setExpiry(e.target.value)} />}
      </Field>
      <fieldset className="scopes" aria-describedby="scopes-hint">
        <legend>Scopes</legend>
        <p id="scopes-hint" className="muted small">
          Scopes do not restrict the key (it acts as an account admin); the MCP endpoint reads them. Without any, the
          key is a legacy key.
        </p>
        {scopes.isPending ? (
          <Loading label="Loading the scopes you may grant…" />
        ) : scopes.isError ? (
          <ErrorState error={scopes.error} onRetry={() => void scopes.refetch()} />
        ) : (
          <ul className="scope-list">
            {scopes.data.map((scope) => (
              <li key={scope}>
                <label>
                  <input
                    type="checkbox"
                    checked={chosen.has(scope)}
                    onChange={(e) => toggle(scope, e.target.checked)}
                  />{" "}
                  <code>{scope}</code>
                </label>
              </li>
            ))}
          </ul>
        )}
        {fieldError(create.error, "scopes") && (
          <p className="field-error" role="alert">
            {fieldError(create.error, "scopes")}
          </p>
        )}
      </fieldset>
      <FormError message={formError(create.error, FIELDS)} />
      <p className="actions">
        <button type="submit" className="button primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create key"}
        </button>
        <button type="button" className="button secondary" onClick={onCancel}>
          Cancel
        </button>
      </p>
    </form>
  );
}
