import { Link, Outlet, useRouterState } from "@tanstack/react-router";
import { useEffect, useState } from "react";
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
  // On a phone the navigation is a menu the button opens; it closes on the page it leads to (a
  // link tapped, or the address changed another way: back, forward).
  const [menuOpen, setMenuOpen] = useState(false);
  const path = useRouterState({ select: (state) => state.location.pathname });
  // biome-ignore lint/correctness/useExhaustiveDependencies: closing is what a new path means.
  useEffect(() => setMenuOpen(false), [path]);
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">
          <img src="/favicon.svg" alt="" width="24" height="24" /> <span className="brand-name">Tracking platform</span>
        </span>
        <button
          type="button"
          className="button secondary menu-button"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
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
        <nav id="main-nav" aria-label="Main" className="sidebar" data-open={menuOpen}>
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
                      onClick={() => setMenuOpen(false)}
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
