import { useQuery } from "@tanstack/react-query";
import { getRouteApi, useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { Pager } from "../../components/Pager";
import { SecretOnce } from "../../components/SecretOnce";
import { ErrorState, Loading } from "../../components/states";
import { useMe } from "../../me";
import { useCan } from "../../permissions";
import { withOffset } from "../../search-params";
import { type CreatedKey, CreateKeyForm } from "./CreateKeyForm";
import { KeysTable } from "./KeysTable";
import { keysQuery } from "./queries";
import "./api-keys.css";

// The page reaches its route by id: its routes module imports it, never the other way.
const apiKeysRoute = getRouteApi("/app/api-keys");

/**
 * The tenant's API keys (GET /api/v1/api-tokens): who made each, its scopes, expiry and last
 * use. A new key's value lives only in this page's state until it is dismissed or the page is
 * left: the API never answers it again.
 */
export function ApiKeysPage() {
  const { offset = 0, scopes: preset } = apiKeysRoute.useSearch();
  const navigate = useNavigate({ from: "/api-keys" });
  const me = useMe();
  const can = useCan();
  const admin = can("account.admin");
  const keys = useQuery({ ...keysQuery(offset), enabled: admin });
  // A link naming scopes (the MCP page's) opens the form with them checked.
  const [creating, setCreating] = useState(preset !== undefined);
  const [created, setCreated] = useState<CreatedKey | null>(null);

  return (
    <>
      <div className="page-head">
        <h1>API keys</h1>
        {/* A list the API refused (a plan without the feature, say) offers nothing to add either. */}
        {admin && keys.isSuccess && !creating && !created && (
          <button type="button" className="button primary" onClick={() => setCreating(true)}>
            Create an API key
          </button>
        )}
      </div>
      <p className="muted">
        A key lets a program call the API as this account (<code>Authorization: ApiKey &lt;key&gt;</code>). Its value is
        shown once, when it is created.
      </p>
      {created && (
        <SecretOnce title={`The new key '${created.name}'`} value={created.token} onDone={() => setCreated(null)} />
      )}
      {creating && (
        <CreateKeyForm
          initialScopes={preset?.split(",") ?? []}
          onCreated={(key) => {
            setCreating(false);
            setCreated(key);
          }}
          onCancel={() => setCreating(false)}
        />
      )}
      {me.isPending ? (
        <Loading label="Loading your permissions…" />
      ) : me.isError ? (
        <ErrorState error={me.error} onRetry={() => void me.refetch()} />
      ) : !admin ? (
        <p className="notice warning" role="status">
          API keys are managed by account admins: your permissions do not include <code>account.admin</code>.
        </p>
      ) : keys.isPending ? (
        <Loading label="Loading the API keys…" />
      ) : keys.isError ? (
        <ErrorState error={keys.error} onRetry={() => void keys.refetch()} />
      ) : (
        <>
          <KeysTable rows={keys.data.items} canDelete={admin} />
          <Pager
            page={keys.data.page}
            label="API keys"
            onOffset={(next) => void navigate({ search: (prev) => withOffset(prev, next) })}
          />
        </>
      )}
    </>
  );
}
