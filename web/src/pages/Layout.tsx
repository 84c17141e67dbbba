import { Link, Outlet } from "@tanstack/react-router";
import { useMe } from "../me";
import { session } from "../session";

/**
 * The pages in the navigation, in the order the product names them. A page joins this list when
 * it exists: Reports, Accounts and links, Catalog, Conversions, Outgoing webhooks, Operational
 * webhooks, API keys, Usage, Issues and Settings follow.
 */
const NAV = [{ to: "/", label: "Overview" }] as const;

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
        <nav aria-label="Main">
          <ul className="nav">
            {NAV.map((item) => (
              <li key={item.to}>
                <Link to={item.to} activeOptions={{ exact: true, includeSearch: false }} className="nav-link">
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          {me.data && (
            <span className="who-name" title={me.data.email}>
              {me.data.name}
            </span>
          )}
          <button type="button" className="button secondary" onClick={() => session.end("signed-out")}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" className="content" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
