import { useMutation, useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { FormError, fieldError, formError } from "../../components/Field";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime } from "../../format";
import { useMe } from "../../me";
import { useCan } from "../../permissions";
import { SourceTabs } from "../traffic-sources/parts";
import { createRow, updateRow, useInvalidateCatalog } from "./catalog-api";
import { EntityField } from "./EntityFields";
import { ENTITIES, type EntityKey, type EntitySpec } from "./entities";
import { bodyOf, type FormValues, initialValues } from "./form-values";
import { DeleteRowButton } from "./parts";
import { type CatalogRow, rowQuery } from "./queries";
import { catalogId, filtersOf, type ListSearch } from "./search";

// The page reaches its route by id: its routes module imports it, never the other way.
const entityFormRoute = getRouteApi("/app/catalog/$entity/$id");

/** A new row (`/catalog/brands/new`) or one to edit (`/catalog/brands/12`), for any of the six lists. */
export function EntityFormPage() {
  const params = entityFormRoute.useParams();
  const back = entityFormRoute.useSearch();
  const spec = ENTITIES[params.entity as EntityKey];
  const id = params.id === "new" ? undefined : catalogId(params.id);
  const row = useQuery({ ...rowQuery(spec.key, id), enabled: id !== undefined });
  const me = useMe();
  const can = useCan();
  const title = id === undefined ? `New ${spec.singular.toLowerCase()}` : `Edit ${spec.singular.toLowerCase()}`;

  return (
    <>
      <p className="breadcrumb">
        <Link to="/catalog/$entity" params={{ entity: spec.key }} search={back}>
          {spec.plural}
        </Link>{" "}
        / {id === undefined ? "new" : (row.data?.name ?? `#${id}`)}
      </p>
      <div className="page-head">
        <h1>{title}</h1>
      </div>
      {spec.key === "traffic-sources" && id !== undefined && <SourceTabs id={id} current="details" />}
      {me.isPending || (id !== undefined && row.isPending) ? (
        <Loading label={`Loading the ${spec.singular.toLowerCase()}…`} />
      ) : me.isError ? (
        <ErrorState error={me.error} onRetry={() => void me.refetch()} />
      ) : row.isError ? (
        <ErrorState error={row.error} onRetry={() => void row.refetch()} />
      ) : !can("catalog.update") ? (
        <p className="notice warning" role="status">
          Changing the catalog needs the catalog.update permission, which you do not have.
        </p>
      ) : (
        <EntityForm key={`${spec.key}-${id ?? "new"}`} spec={spec} row={row.data} back={back} />
      )}
    </>
  );
}

interface Warning {
  field: string;
  message: string;
}

/** The API's advice on a saved row (brand links: a URL without {clickId}); none for other lists. */
function warningsOf(row: CatalogRow): Warning[] {
  return Array.isArray(row.warnings) ? (row.warnings as Warning[]) : [];
}

function EntityForm({ spec, row, back }: { spec: EntitySpec; row: CatalogRow | undefined; back: ListSearch }) {
  const navigate = useNavigate();
  const invalidate = useInvalidateCatalog();
  const can = useCan();
  const [initial] = useState<FormValues>(() => initialValues(spec, row, filtersOf(spec, back)));
  const [values, setValues] = useState(initial);
  const [unchanged, setUnchanged] = useState(false);
  const toList = () => void navigate({ to: "/catalog/$entity", params: { entity: spec.key }, search: back });
  const save = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      row ? updateRow(spec.key, row.id, body) : createRow(spec.key, body),
    onSuccess: async (saved) => {
      await invalidate();
      // A row saved with a warning (a brand link without {clickId}) stays open so the warning is read.
      if (warningsOf(saved).length === 0) return toList();
      if (!row)
        void navigate({ to: "/catalog/$entity/$id", params: { entity: spec.key, id: String(saved.id) }, search: back });
    },
  });
  const names = spec.fields.map((f) => f.name);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const body = row ? bodyOf(spec, values, initial) : bodyOf(spec, values);
    // The API refuses an empty change; saying so here spares the round trip.
    if (row && Object.keys(body).length === 0) return setUnchanged(true);
    setUnchanged(false);
    save.mutate(body);
  };

  return (
    <form className="form-panel" onSubmit={submit} noValidate aria-label={row ? `Edit ${row.name}` : undefined}>
      {row && (
        <dl className="facts catalog-facts">
          <div className="fact">
            <dt>ID</dt>
            <dd>{row.id}</dd>
          </div>
          <div className="fact">
            <dt>Created</dt>
            <dd>{formatDateTime(row.createdAt)}</dd>
          </div>
          <div className="fact">
            <dt>Updated</dt>
            <dd>{formatDateTime(row.updatedAt)}</dd>
          </div>
        </dl>
      )}
      {spec.fields.map((field) => (
        <EntityField
          key={field.name}
          field={field}
          value={values[field.name] ?? ""}
          onChange={(value) => setValues((prev) => ({ ...prev, [field.name]: value }))}
          error={fieldError(save.error, field.name)}
        />
      ))}
      {row && warningsOf(row).length > 0 && (
        <div className="notice warning" role="status">
          <p>Saved, with a warning:</p>
          <ul>
            {warningsOf(row).map((w) => (
              <li key={`${w.field}-${w.message}`}>{w.message}</li>
            ))}
          </ul>
        </div>
      )}
      <FormError message={formError(save.error, names)} />
      {unchanged && (
        <p className="notice" role="status">
          Nothing changed: there is nothing to save.
        </p>
      )}
      <div className="actions">
        <button type="submit" className="button primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : row ? "Save" : `Create ${spec.singular.toLowerCase()}`}
        </button>
        <Link to="/catalog/$entity" params={{ entity: spec.key }} search={back} className="button secondary">
          Cancel
        </Link>
        {row && can(spec.deletePermission) && (
          <span className="catalog-form-delete">
            <DeleteRowButton spec={spec} row={row} onDeleted={toList} />
          </span>
        )}
      </div>
    </form>
  );
}
