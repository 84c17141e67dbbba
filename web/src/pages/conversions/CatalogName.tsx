import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import { useCan } from "../../permissions";

export type CatalogKind = "accounts" | "links" | "programs" | "brands" | "traffic-sources" | "trackers";

/** The catalog item's name, from its own route (each path is typed on its own). */
async function nameOf(kind: CatalogKind, id: number): Promise<string> {
  const path = { params: { path: { id } } };
  switch (kind) {
    case "accounts":
      return (await unwrap(api.GET("/api/v1/accounts/{id}", path))).data.name;
    case "links":
      return (await unwrap(api.GET("/api/v1/links/{id}", path))).data.name;
    case "programs":
      return (await unwrap(api.GET("/api/v1/programs/{id}", path))).data.name;
    case "brands":
      return (await unwrap(api.GET("/api/v1/brands/{id}", path))).data.name;
    case "traffic-sources":
      return (await unwrap(api.GET("/api/v1/traffic-sources/{id}", path))).data.name;
    case "trackers":
      return (await unwrap(api.GET("/api/v1/trackers/{id}", path))).data.name;
  }
}

/**
 * A catalog item a conversion names by id: its name where the person may read the catalog
 * (asking without catalog.read would only earn a 403), always with its id.
 */
export function CatalogName({ kind, id }: { kind: CatalogKind; id: number | null }) {
  const can = useCan();
  const allowed = can("catalog.read");
  const name = useQuery({
    queryKey: ["catalog", kind, id],
    queryFn: () => nameOf(kind, id ?? 0),
    enabled: allowed && id !== null,
    staleTime: 5 * 60_000,
  });
  if (id === null) return <span className="muted">none</span>;
  return (
    <>
      {name.data ? <span className="catalog-name">{name.data} </span> : null}
      <span className="muted">#{id}</span>
      {name.isError && <span className="muted small"> (name unavailable)</span>}
    </>
  );
}
