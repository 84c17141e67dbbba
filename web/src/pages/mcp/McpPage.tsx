import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { CopyButton } from "../../components/CopyButton";
import { ErrorState, Loading } from "../../components/states";
import { useCan } from "../../permissions";
import { connectionQuery } from "./queries";
import { ServiceStatus } from "./ServiceStatus";
import "./mcp.css";

type Connection = Awaited<ReturnType<typeof connectionQuery.queryFn>>;

/** A client's `mcpServers` entry for this service: the address and the header, the key left to fill in. */
export function clientSnippet(origin: string, connection: Pick<Connection, "path" | "authorization">): string {
  const entry = {
    mcpServers: {
      "tracking-platform": {
        type: "http",
        url: `${origin}${connection.path}`,
        headers: { Authorization: connection.authorization },
      },
    },
  };
  return JSON.stringify(entry, null, 2);
}

/**
 * For the people who connect an AI assistant to the reports: the MCP endpoint, a client
 * configuration to copy, the scopes its key needs and the tools it offers (GET /api/v1/mcp),
 * and, for account admins, the service's health and build.
 */
export function McpPage() {
  const can = useCan();
  const connection = useQuery(connectionQuery);
  return (
    <div className="mcp-page">
      <h1>MCP</h1>
      <p className="muted">
        AI assistants that speak the Model Context Protocol can run this account's reports through the MCP endpoint,
        with an API key of their own.
      </p>
      {connection.isPending ? (
        <Loading label="Loading the MCP connection…" />
      ) : connection.isError ? (
        <ErrorState error={connection.error} onRetry={() => void connection.refetch()} />
      ) : (
        <Connect connection={connection.data} canCreateKeys={can("account.admin")} />
      )}
      {can("account.admin") && <ServiceStatus />}
    </div>
  );
}

function Connect({ connection, canCreateKeys }: { connection: Connection; canCreateKeys: boolean }) {
  const address = `${window.location.origin}${connection.path}`;
  const snippet = clientSnippet(window.location.origin, connection);
  return (
    <>
      <section className="panel" aria-labelledby="mcp-address-title">
        <h2 id="mcp-address-title">Endpoint</h2>
        <p>
          <code className="mcp-address">{address}</code> <CopyButton value={address} label="Copy the address" />
        </p>
        <p className="muted small">
          Streamable HTTP. Every request sends <code>Authorization: {connection.authorization}</code>.
        </p>
      </section>
      <section className="panel" aria-labelledby="mcp-client-title">
        <h2 id="mcp-client-title">Client configuration</h2>
        <p className="muted small">
          An <code>mcpServers</code> entry, as most MCP clients read it; put your key in place of{" "}
          <code>&lt;key&gt;</code>.
        </p>
        <pre className="mcp-snippet">{snippet}</pre>
        <CopyButton value={snippet} label="Copy the configuration" />
      </section>
      <section className="panel" aria-labelledby="mcp-key-title">
        <h2 id="mcp-key-title">The key it needs</h2>
        <p>
          An API key with one of these scopes:{" "}
          {connection.scopes.map((scope, i) => (
            <span key={scope}>
              {i > 0 && " or "}
              <code>{scope}</code>
            </span>
          ))}
          . Keys created before scopes existed are refused.
        </p>
        {canCreateKeys ? (
          <Link to="/api-keys" search={{ scopes: connection.scopes.slice(0, 1).join(",") }} className="button primary">
            Create a key for MCP
          </Link>
        ) : (
          <p className="muted small">API keys are created by account admins: ask one for such a key.</p>
        )}
      </section>
      <section className="panel" aria-labelledby="mcp-tools-title">
        <h2 id="mcp-tools-title">Tools</h2>
        <dl className="mcp-tools">
          {connection.tools.map((tool) => (
            <div key={tool.name}>
              <dt>
                <code>{tool.name}</code>
              </dt>
              <dd>{tool.description}</dd>
            </div>
          ))}
        </dl>
      </section>
    </>
  );
}
