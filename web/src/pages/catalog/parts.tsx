import { useMutation, useQuery } from "@tanstack/react-query";
import { ConfirmButton } from "../../components/ConfirmButton";
import { messageOf } from "../../components/states";
import { deleteRow, useInvalidateCatalog } from "./catalog-api";
import type { EntityKey, EntitySpec } from "./entities";
import { type CatalogRow, rowQuery } from "./queries";

/** A row of another list by its name, read by id (cached: a page's rows share their reads), or its id. */
export function RefName({ entity, id }: { entity: EntityKey; id: unknown }) {
  const known = typeof id === "number" ? id : undefined;
  const row = useQuery({ ...rowQuery(entity, known), enabled: known !== undefined });
  if (id === null || id === undefined) return null;
  return <>{row.data ? row.data.name : `#${String(id)}`}</>;
}

/** Delete, after asking; the API's refusal (a brand programs still offer) shown beside it. */
export function DeleteRowButton({
  spec,
  row,
  onDeleted,
}: {
  spec: EntitySpec;
  row: CatalogRow;
  onDeleted?: () => void;
}) {
  const invalidate = useInvalidateCatalog();
  const remove = useMutation({
    mutationFn: () => deleteRow(spec.key, row.id),
    onSuccess: async () => {
      await invalidate({ entity: spec.key, id: row.id });
      onDeleted?.();
    },
  });
  return (
    <>
      <ConfirmButton
        label="Delete"
        name={`Delete ${row.name}`}
        danger
        disabled={remove.isPending}
        question={
          <>
            Delete the {spec.singular.toLowerCase()} <strong>{row.name}</strong>? This cannot be undone.
          </>
        }
        onConfirm={() => remove.mutate()}
      />
      {remove.isError && (
        <p className="field-error catalog-delete-error" role="alert">
          {messageOf(remove.error)}
        </p>
      )}
    </>
  );
}
