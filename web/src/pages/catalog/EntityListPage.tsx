import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { type FormEvent, useEffect, useState } from "react";
import { type Column, DataTable } from "../../components/DataTable";
import { Field } from "../../components/Field";
import { Pager } from "../../components/Pager";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime } from "../../format";
import { useCan } from "../../permissions";
import { RowSelect } from "./EntityFields";
import { ENTITIES, type EntityKey, type EntitySpec, type FieldSpec, type FilterSpec } from "./entities";
import { DeleteRowButton, RefName } from "./parts";
import { type CatalogRow, listQueryOf, rowsQuery } from "./queries";
import { filtersOf, type ListSearch } from "./search";

// The page reaches its route by id: its routes module imports it, never the other way.
const entityListRoute = getRouteApi("/app/catalog/$entity");

/** Any of the six lists: the route's `$entity` picks its description. */
export function EntityListPage() {
  const { entity } = entityListRoute.useParams();
  const spec = ENTITIES[entity as EntityKey];
  // A fresh page per list: the search box does not carry over from brands to programs.
  return <EntityList key={spec.key} spec={spec} />;
}

function EntityList({ spec }: { spec: EntitySpec }) {
  const search = entityListRoute.useSearch();
  const navigate = useNavigate({ from: "/catalog/$entity" });
  const can = useCan();
  const filters = filtersOf(spec, search);
  const offset = search.offset ?? 0;
  const rows = useQuery({ ...rowsQuery(spec.key, listQueryOf(spec, search)), placeholderData: keepPreviousData });
  const narrowed = search.search !== undefined || Object.keys(filters).length > 0;
  const go = (next: ListSearch) => void navigate({ search: (prev) => ({ ...prev, ...next }) });
  const plural = spec.plural.toLowerCase();

  return (
    <>
      <div className="page-head">
        <h1>{spec.plural}</h1>
        {can("catalog.update") && (
          <Link
            to="/catalog/$entity/$id"
            params={{ entity: spec.key, id: "new" }}
            search={filters}
            className="button primary"
          >
            New {spec.singular.toLowerCase()}
          </Link>
        )}
      </div>
      <p className="muted">{spec.about}</p>

      <div className="toolbar">
        <SearchBox
          value={search.search}
          label={`Search ${plural}`}
          onSearch={(s) => go({ search: s, offset: undefined })}
        />
        {spec.filters.map((filter) => (
          <FilterSelect
            key={filter.name}
            filter={filter}
            value={search[filter.name]}
            onChange={(value) => go({ [filter.name]: value, offset: undefined })}
          />
        ))}
      </div>

      {rows.isPending ? (
        <Loading label={`Loading ${plural}…`} />
      ) : rows.isError ? (
        <ErrorState error={rows.error} onRetry={() => void rows.refetch()} />
      ) : (
        <>
          <DataTable
            caption={spec.plural}
            columns={columnsOf(spec, can, search)}
            rows={rows.data.rows}
            rowKey={(row) => String(row.id)}
            empty={
              offset > 0 && rows.data.page.total > 0 ? (
                <>
                  No {plural} on this page.{" "}
                  <button type="button" className="button secondary" onClick={() => go({ offset: undefined })}>
                    First page
                  </button>
                </>
              ) : narrowed ? (
                `No ${plural} match.`
              ) : (
                `No ${plural} yet.`
              )
            }
          />
          <Pager page={rows.data.page} label={spec.plural} onOffset={(next) => go({ offset: next || undefined })} />
        </>
      )}
    </>
  );
}

function SearchBox({
  value,
  label,
  onSearch,
}: {
  value: string | undefined;
  label: string;
  onSearch: (s: string | undefined) => void;
}) {
  const [text, setText] = useState(value ?? "");
  // Back and forward change the URL under the box: it follows.
  useEffect(() => setText(value ?? ""), [value]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSearch(text.trim() || undefined);
  };
  return (
    <form className="catalog-search" onSubmit={submit}>
      <Field label={label}>
        {(control) => <input {...control} type="search" value={text} onChange={(e) => setText(e.target.value)} />}
      </Field>
      <button type="submit" className="button secondary">
        Search
      </button>
    </form>
  );
}

function FilterSelect({
  filter,
  value,
  onChange,
}: {
  filter: FilterSpec;
  value: string | number | undefined;
  onChange: (value: string | number | undefined) => void;
}) {
  const current = value === undefined ? "" : String(value);
  if (filter.ref) {
    return (
      <RowSelect
        label={filter.label}
        entity={filter.ref}
        value={current}
        none="All"
        onChange={(next) => onChange(next === "" ? undefined : Number(next))}
      />
    );
  }
  return (
    <Field label={filter.label}>
      {(control) => (
        <select {...control} value={current} onChange={(e) => onChange(e.target.value || undefined)}>
          <option value="">All</option>
          {filter.choices?.map((choice) => (
            <option key={choice} value={choice}>
              {choice}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

function cellOf(field: FieldSpec, row: CatalogRow) {
  const value = row[field.name];
  if (field.kind === "ref" && field.ref) return <RefName entity={field.ref} id={value} />;
  if (field.kind === "refs" && field.ref) {
    const ids = Array.isArray(value) ? value : [];
    if (ids.length === 0) return <span className="muted">none</span>;
    const ref = field.ref;
    return (
      <ul className="catalog-inline-list">
        {ids.map((id) => (
          <li key={String(id)}>
            <RefName entity={ref} id={id} />
          </li>
        ))}
      </ul>
    );
  }
  if (value === null || value === undefined || value === "") return <span className="muted">—</span>;
  return field.kind === "url" ? <span className="catalog-url">{String(value)}</span> : String(value);
}

function columnsOf(spec: EntitySpec, can: (permission: string) => boolean, back: ListSearch): Column<CatalogRow>[] {
  const columns: Column<CatalogRow>[] = [
    { key: "id", label: "ID", numeric: true, cell: (row) => row.id },
    ...spec.fields.map((field) => ({
      key: field.name,
      label: field.label,
      cell: (row: CatalogRow) => cellOf(field, row),
    })),
  ];
  if (spec.related.length > 0) {
    columns.push({
      key: "related",
      label: "Related",
      cell: (row) => (
        <ul className="catalog-inline-list">
          {spec.related.map((related) => (
            <li key={related.entity}>
              <Link to="/catalog/$entity" params={{ entity: related.entity }} search={{ [related.filter]: row.id }}>
                {ENTITIES[related.entity].plural}
                <span className="visually-hidden"> of {row.name}</span>
              </Link>
            </li>
          ))}
        </ul>
      ),
    });
  }
  if (spec.key === "traffic-sources" && (can("webhooks.read") || can("webhooks.update"))) {
    // A source's postback and Google Ads pages, for whoever holds the webhooks' rights, which they take.
    columns.push({
      key: "integrations",
      label: "Integrations",
      cell: (row) => (
        <ul className="catalog-inline-list">
          <li>
            <Link to="/catalog/traffic-sources/$sourceId/postback" params={{ sourceId: String(row.id) }}>
              Postback<span className="visually-hidden"> of {row.name}</span>
            </Link>
          </li>
          <li>
            <Link to="/catalog/traffic-sources/$sourceId/google-ads" params={{ sourceId: String(row.id) }}>
              Google Ads<span className="visually-hidden"> of {row.name}</span>
            </Link>
          </li>
        </ul>
      ),
    });
  }
  columns.push({ key: "updatedAt", label: "Updated", cell: (row) => formatDateTime(row.updatedAt) });
  const canEdit = can("catalog.update");
  const canDelete = can(spec.deletePermission);
  if (canEdit || canDelete) {
    columns.push({
      key: "actions",
      label: "Actions",
      cell: (row) => (
        <div className="actions">
          {canEdit && (
            <Link
              to="/catalog/$entity/$id"
              params={{ entity: spec.key, id: String(row.id) }}
              search={back}
              className="button secondary"
            >
              Edit<span className="visually-hidden"> {row.name}</span>
            </Link>
          )}
          {canDelete && <DeleteRowButton spec={spec} row={row} />}
        </div>
      ),
    });
  }
  return columns;
}
