import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { messageOf } from "../../components/states";
import { formatInteger } from "../../format";
import { useCan } from "../../permissions";
import { ENTITIES, ENTITY_KEYS, type EntityKey, type EntitySpec } from "./entities";
import { countQuery } from "./queries";

/** The catalog's landing: each list with how many rows it holds (the API's pagination total). */
export function CatalogHome() {
  const can = useCan();
  return (
    <>
      <div className="page-head">
        <h1>Catalog</h1>
      </div>
      <p className="muted">
        What clicks are tracked against: brands, the programs offering them, your accounts, the brand links clicks land
        on, the traffic sources they come from, and trackers.
        {!can("catalog.update") && " You can look at the catalog; changing it needs the catalog.update permission."}
      </p>
      <ul className="catalog-cards">
        {ENTITY_KEYS.map((key) => (
          <EntityCard key={key} spec={ENTITIES[key]} />
        ))}
        <li className="panel catalog-card">
          <h2>
            <Link to="/catalog/link-generator">Link generator</Link>
          </h2>
          <p className="muted">The tracking URL of a brand link on a traffic source, with a tracker.</p>
        </li>
      </ul>
    </>
  );
}

function useCount(entity: EntityKey) {
  return useQuery(countQuery(entity));
}

function EntityCard({ spec }: { spec: EntitySpec }) {
  const count = useCount(spec.key);
  return (
    <li className="panel catalog-card" data-entity={spec.key}>
      <h2>
        <Link to="/catalog/$entity" params={{ entity: spec.key }}>
          {spec.plural}
        </Link>
      </h2>
      <p className="catalog-count" data-count={count.data ?? ""}>
        {count.isPending ? (
          <span className="muted">Counting…</span>
        ) : count.isError ? (
          <span className="muted small">{messageOf(count.error)}</span>
        ) : (
          formatInteger(count.data)
        )}
      </p>
      <p className="muted">{spec.about}</p>
    </li>
  );
}
