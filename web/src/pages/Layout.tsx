import { Link, Outlet } from "@tanstack/react-router";
import { api } from "../api/client";
import { useMe } from "../me";
import { session } from "../session";

/** The pages in the navigation, grouped as a person works: look, set up, integrate, account. */
const NAV = [
  {
    group: "Performance",
    items: [
      { to: "/", label: "Overview" },
      { to: "/reports", label: "Reports" },
      { to: "/accounts", label: "Accounts and links" },
      { to: "/conversions", label: "Conversions" },
      { to: "/clicks", label: "Clicks" },
    ],
  },
  { group: "Set up", items: [{ to: "/catalog", label: "Catalog" }] },
  {
    group: "Integrations",
    items: [
      { to: "/postback-log", label: "Postback log" },
      { to: "/webhooks", label: "Outgoing webhooks" },
      { to: "/notifications", label: "Operational webhooks" },
      { to: "/api-keys", label: "API keys" },
      { to: "/mcp-setup", label: "MCP" },
    ],
  },
  {
    group: "Account",
    items: [
      { to: "/usage", label: "Usage" },
      { to: "/issues", label: "Issues" },
      { to: "/settings", label: "Settings" },
    ],
  },
] as const;

/**
 * Ends the session on the server first (DELETE /api/v1/auth: the token is refused from then on,
 * on every node), then in this tab; the tab forgets the token even if the server cannot be reached.
 */
async function signOut(): Promise<void> {
  try {
    await api.DELETE("/api/v1/auth");
  } catch {
    // Offline or refused: the token still leaves this tab, and expires on its own.
  }
  session.end("signed-out");
}

export function Layout() {
  const me = useMe();
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">
          <img src="/favicon.svg" alt="" width="24" height="24" /> Tracking platform
        </span>
        <div className="who">
          {me.data && (
            <span className="who-name" title={me.data.email}>
              {me.data.name}
            </span>
          )}
          <button type="button" className="button secondary" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <div className="body">
        <nav aria-label="Main" className="sidebar">
          {NAV.map((section) => (
            <div key={section.group} className="nav-group">
              <h2 className="nav-group-title">{section.group}</h2>
              <ul className="nav">
                {section.items.map((item) => (
                  <li key={item.to}>
                    <Link
                      to={item.to}
                      activeOptions={{ exact: item.to === "/", includeSearch: false }}
                      className="nav-link"
                    >
                      {item.label}
                    </Link>
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </nav>
        <main id="main" className="content" tabIndex={-1}>
          <Outlet />
        </main>
      </div>
    </div>
  );
}
