import { Link, Outlet } from "@tanstack/react-router";
import { ENTITIES, ENTITY_KEYS } from "./entities";
import "./catalog.css";

/** The catalog's sections, above each of its pages: its lists and the link generator. */
export function CatalogLayout() {
  return (
    <div className="catalog">
      <CatalogTabs />
      <Outlet />
    </div>
  );
}

/** The sections' tabs, also above a traffic source's integration pages. */
export function CatalogTabs() {
  return (
    <nav className="catalog-tabs" aria-label="Catalog sections">
      <ul>
        <li>
          <Link to="/catalog" activeOptions={{ exact: true, includeSearch: false }} className="catalog-tab">
            All
          </Link>
        </li>
        {ENTITY_KEYS.map((key) => (
          <li key={key}>
            <Link
              to="/catalog/$entity"
              params={{ entity: key }}
              activeOptions={{ includeSearch: false }}
              className="catalog-tab"
            >
              {ENTITIES[key].plural}
            </Link>
          </li>
        ))}
        <li>
          <Link to="/catalog/link-generator" activeOptions={{ includeSearch: false }} className="catalog-tab">
            Link generator
          </Link>
        </li>
      </ul>
    </nav>
  );
}
