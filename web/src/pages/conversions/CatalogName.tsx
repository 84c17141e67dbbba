import { useQuery } from "@tanstack/react-query";
import { useCan } from "../../permissions";
import { type CatalogKind, catalogNameQuery } from "../catalog/queries";

/**
 * A catalog item a conversion names by id: its name where the person may read the catalog
 * (asking without catalog.read would only earn a 403), always with its id.
 */
export function CatalogName({ kind, id }: { kind: CatalogKind; id: number | null }) {
  const can = useCan();
  const allowed = can("catalog.read");
  const name = useQuery({ ...catalogNameQuery(kind, id ?? 0), enabled: allowed && id !== null });
  if (id === null) return <span className="muted">none</span>;
  return (
    <>
      {name.data ? <span className="catalog-name">{name.data} </span> : null}
      <span className="muted">#{id}</span>
      {name.isError && <span className="muted small"> (name unavailable)</span>}
    </>
  );
}
