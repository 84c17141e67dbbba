import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ConfirmButton } from "../../components/ConfirmButton";
import { type Column, DataTable } from "../../components/DataTable";
import { messageOf } from "../../components/states";
import { DAY_MS } from "../../dates";
import { formatDateTime } from "../../format";
import { KEYS } from "./queries";

export interface KeyRow {
  id: string;
  name: string;
  scopes: string[];
  legacy: boolean;
  createdAt: string;
  expirationDate: string;
  lastUsedAt: string | null;
  createdBy: { id: string; name: string } | null;
}

const WEEK_MS = 7 * DAY_MS;

/** Expired, or inside the last week, when the service raises its expiry issue. */
function ExpiryBadge({ at }: { at: string }) {
  const left = Date.parse(at) - Date.now();
  if (left <= 0) return <span className="badge error">expired</span>;
  if (left <= WEEK_MS) return <span className="badge warning">expires soon</span>;
  return null;
}

/** The tenant's keys (never their values), each deletable when the person may. */
export function KeysTable({ rows, canDelete }: { rows: KeyRow[]; canDelete: boolean }) {
  const queryClient = useQueryClient();
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const remove = useMutation({
    mutationFn: async (key: KeyRow) =>
      (await unwrap(api.DELETE("/api/v1/api-tokens/{id}", { params: { path: { id: key.id } } }))).data,
    onSuccess: (_, key) => setOutcome({ ok: true, text: `Deleted the key '${key.name}': it no longer works.` }),
    onError: (error, key) =>
      setOutcome({ ok: false, text: `The key '${key.name}' was not deleted. ${messageOf(error)}` }),
    onSettled: () => queryClient.invalidateQueries({ queryKey: KEYS }),
  });

  const columns: Column<KeyRow>[] = [
    {
      key: "name",
      label: "Name",
      cell: (key) => (
        <>
          <strong>{key.name}</strong>
          <br />
          <span className="muted small">{key.id}</span>
        </>
      ),
    },
    {
      key: "scopes",
      label: "Scopes",
      cell: (key) =>
        key.legacy ? (
          <span className="muted">legacy (no scopes)</span>
        ) : (
          <ul className="scope-chips">
            {key.scopes.map((scope) => (
              <li key={scope}>
                <code>{scope}</code>
              </li>
            ))}
          </ul>
        ),
    },
    {
      key: "created",
      label: "Created",
      cell: (key) => (
        <>
          {formatDateTime(key.createdAt)}
          {key.createdBy && <span className="muted small block">by {key.createdBy.name}</span>}
        </>
      ),
    },
    {
      key: "expires",
      label: "Expires",
      cell: (key) => (
        <>
          {formatDateTime(key.expirationDate)} <ExpiryBadge at={key.expirationDate} />
        </>
      ),
    },
    {
      key: "lastUsed",
      label: "Last used",
      cell: (key) => (key.lastUsedAt ? formatDateTime(key.lastUsedAt) : <span className="muted">never</span>),
    },
    ...(canDelete
      ? [
          {
            key: "actions",
            label: "Actions",
            cell: (key: KeyRow) => (
              <ConfirmButton
                label="Delete"
                name={`Delete ${key.name}`}
                danger
                disabled={remove.isPending}
                question={`Delete the API key '${key.name}'? Every call made with it is refused from now on; this cannot be undone.`}
                onConfirm={() => remove.mutate(key)}
              />
            ),
          },
        ]
      : []),
  ];

  return (
    <>
      {outcome && (
        <p className={outcome.ok ? "notice" : "notice error"} role={outcome.ok ? "status" : "alert"}>
          {outcome.text}
        </p>
      )}
      <DataTable caption="API keys" columns={columns} rows={rows} rowKey={(key) => key.id} empty="No API keys yet." />
    </>
  );
}
