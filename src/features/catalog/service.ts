import { isUniqueViolation, type Queryable } from "../../platform/db/index.js";
import { Conditions, selectPage } from "../../platform/db/paging.js";
import { containsPattern } from "../../platform/db/search.js";
import { ApiError } from "../../platform/http/errors.js";
import { type Actor, recordAudit } from "../audit/index.js";
import { broadcastCatalogChange } from "./broadcast.js";
import { type CatalogResource, type CatalogTable, type FieldDef, RESOURCES } from "./resources.js";

export type CatalogItem = Record<string, unknown> & { id: number };
type Row = Record<string, unknown>;
type Input = Record<string, unknown>;

/** Who changed what, recorded in the audit log and broadcast to every node's tracking cache. */
export interface Change {
  tenantId: string;
  actor: Actor;
  at: Date;
  requestId?: string;
}

function toItem(resource: CatalogResource, row: Row): CatalogItem {
  const item: CatalogItem = { id: Number(row.id) };
  for (const [name, field] of Object.entries(resource.fields)) {
    const value = row[field.column];
    if (field.kind === "ref") item[name] = Number(value);
    else if (field.kind === "refs") item[name] = ((value as unknown[] | null) ?? []).map(Number);
    else item[name] = value ?? null;
  }
  if (resource.warnings) item.warnings = resource.warnings(item);
  // Only statements that read them (namesSql) carry the names; a report's rows do not.
  const names = Object.keys(resource.names ?? {});
  if (names.length > 0 && names.every((name) => `${name}_name` in row)) {
    item.names = Object.fromEntries(names.map((name) => [name, (row[`${name}_name`] as string | null) ?? null]));
  }
  item.createdAt = new Date(row.created_at as string).toISOString();
  item.updatedAt = new Date(row.updated_at as string).toISOString();
  return item;
}

function checkUrl(name: string, value: unknown): void {
  if (value === null || value === undefined) return;
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw ApiError.validation(name, "must be an absolute http or https URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw ApiError.validation(name, `must be an http or https URL, not ${url.protocol.replace(":", "")}`);
  }
}

/**
 * Every referenced id must be a row of the caller's tenant; the message names the field.
 * The rows are locked (for share) until the change commits: a delete in flight on another
 * node is waited for (then the row is gone, 400), and a delete that comes later waits and then
 * sees the new use (409). Without it, brand_ids (no foreign key) could point at a deleted brand.
 */
async function checkReference(db: Queryable, tenantId: string, name: string, field: FieldDef, value: unknown) {
  if (!field.ref || value === null || value === undefined) return;
  const ids = (Array.isArray(value) ? value : [value]).map(Number);
  if (ids.length === 0) return;
  const found = await db.query<{ id: string | number }>(
    `select id from ${field.ref.table} where tenant_id = $1 and id = any($2::bigint[]) for share`,
    [tenantId, ids],
  );
  const known = new Set(found.map((r) => Number(r.id)));
  const missing = ids.find((id) => !known.has(id));
  if (missing !== undefined) throw ApiError.validation(name, `${field.ref.what} ${missing} does not exist`);
}

async function checkInput(db: Queryable, resource: CatalogResource, tenantId: string, input: Input): Promise<void> {
  for (const [name, field] of Object.entries(resource.fields)) {
    if (!(name in input)) continue;
    const value = input[name];
    if (typeof value === "string" && value.includes("\u0000")) {
      throw ApiError.validation(name, "must not contain NUL characters");
    }
    if (typeof value === "string" && field.kind === "text") {
      // Characters as the database counts them (an emoji is one), not UTF-16 units.
      const length = [...value.trim()].length;
      if (name === "name" && length === 0) throw ApiError.validation(name, "must not be blank");
      if (field.length && (length < field.length.min || length > field.length.max)) {
        throw ApiError.validation(name, `must be ${field.length.min} to ${field.length.max} characters`);
      }
      if (field.notDigitsOnly && /^[0-9]+$/.test(value.trim())) throw ApiError.validation(name, field.notDigitsOnly);
    }
    if (field.kind === "url") checkUrl(name, value);
    await checkReference(db, tenantId, name, field, value);
  }
}

function columnValue(field: FieldDef, value: unknown): unknown {
  if (field.kind === "json") return value === null || value === undefined ? null : JSON.stringify(value);
  if (typeof value === "string" && field.kind !== "url") return value.trim();
  return value ?? null;
}

function translateUnique(resource: CatalogResource, input: Input, error: unknown): never {
  if (isUniqueViolation(error)) {
    throw ApiError.conflict(`A ${resource.label.toLowerCase()} named '${String(input.name)}' already exists`);
  }
  throw error;
}

/** `, (select name ...) as account_name` for each of the resource's names, over alias `alias`. */
function namesSql(resource: CatalogResource, alias: string): string {
  return Object.entries(resource.names ?? {})
    .map(
      ([name, ref]) =>
        `, (select x.name from ${ref.table} x where x.tenant_id = ${alias}.tenant_id and x.id = ${alias}.${ref.column}) as ${name}_name`,
    )
    .join("");
}

export async function listItems(
  db: Queryable,
  resource: CatalogResource,
  tenantId: string,
  query: Record<string, unknown> & { offset: number; limit: number; search?: string },
): Promise<{ items: CatalogItem[]; total: number }> {
  const where = new Conditions("t.tenant_id = $1", tenantId);
  const pattern = containsPattern(query.search);
  if (pattern !== null) {
    // The condition may name the pattern more than once: each bare `$` is its placeholder.
    where.params.push(pattern);
    const placeholder = `$${where.params.length}`;
    where.when(
      true,
      (resource.search ?? "lower(t.name) like $").replace(/\$(?!\d)/g, () => placeholder),
    );
  }
  for (const [name, condition] of Object.entries(resource.filters)) where.add(condition, query[name]);
  const { rows, total } = await selectPage<Row>(
    db,
    {
      select: `t.*${namesSql(resource, "t")}`,
      from: `${resource.table} t`,
      where: where.sql,
      params: where.params,
      orderBy: "t.id",
    },
    query,
  );
  return { items: rows.map((row) => toItem(resource, row)), total };
}

export async function getItem(
  db: Queryable,
  resource: CatalogResource,
  tenantId: string,
  id: number,
): Promise<CatalogItem | null> {
  const [row] = await db.query<Row>(
    `select t.*${namesSql(resource, "t")} from ${resource.table} t where t.tenant_id = $1 and t.id = $2`,
    [tenantId, id],
  );
  return row ? toItem(resource, row) : null;
}

export async function createItem(
  db: Queryable,
  resource: CatalogResource,
  input: Input,
  change: Change,
): Promise<CatalogItem> {
  await checkInput(db, resource, change.tenantId, input);
  const columns = ["tenant_id", "created_at", "updated_at"];
  const values: unknown[] = [change.tenantId, change.at, change.at];
  for (const [name, field] of Object.entries(resource.fields)) {
    if (input[name] === undefined) continue;
    columns.push(field.column);
    values.push(columnValue(field, input[name]));
  }
  const placeholders = values.map((_, i) => `$${i + 1}`).join(", ");
  const [row] = await db
    .query<Row>(
      `insert into ${resource.table} as t (${columns.join(", ")}) values (${placeholders}) returning t.*${namesSql(resource, "t")}`,
      values,
    )
    .catch((error: unknown) => translateUnique(resource, input, error));
  if (!row) throw new Error(`insert into ${resource.table} returned nothing`);
  const item = toItem(resource, row);
  await afterChange(db, resource, change, "created", item.id, input);
  return item;
}

export async function updateItem(
  db: Queryable,
  resource: CatalogResource,
  id: number,
  input: Input,
  change: Change,
): Promise<CatalogItem | null> {
  const [existing] = await db.query(`select 1 from ${resource.table} where tenant_id = $1 and id = $2 for update`, [
    change.tenantId,
    id,
  ]);
  if (!existing) return null;
  await checkInput(db, resource, change.tenantId, input);
  const values: unknown[] = [change.tenantId, id, change.at];
  const sets = ["updated_at = $3"];
  for (const [name, field] of Object.entries(resource.fields)) {
    if (input[name] === undefined) continue;
    values.push(columnValue(field, input[name]));
    sets.push(`${field.column} = $${values.length}`);
  }
  const [row] = await db
    .query<Row>(
      `update ${resource.table} t set ${sets.join(", ")} where t.tenant_id = $1 and t.id = $2 returning t.*${namesSql(resource, "t")}`,
      values,
    )
    .catch((error: unknown) => translateUnique(resource, input, error));
  if (!row) return null;
  const item = toItem(resource, row);
  await afterChange(db, resource, change, "updated", id, input);
  return item;
}

/** Deletes a row; false when it does not exist, 409 while other catalog rows still use it. */
export async function deleteItem(
  db: Queryable,
  resource: CatalogResource,
  id: number,
  change: Change,
): Promise<boolean> {
  const [existing] = await db.query(`select 1 from ${resource.table} where tenant_id = $1 and id = $2 for update`, [
    change.tenantId,
    id,
  ]);
  if (!existing) return false;
  for (const check of resource.inUse) {
    const [used] = await db.query(check.sql, [change.tenantId, id]);
    if (used)
      throw ApiError.conflict(`${resource.label} ${id} is still used by ${check.what}; delete or move them first`);
  }
  await db.query(`delete from ${resource.table} where tenant_id = $1 and id = $2`, [change.tenantId, id]);
  await afterChange(db, resource, change, "deleted", id, {});
  return true;
}

async function afterChange(
  db: Queryable,
  resource: CatalogResource,
  change: Change,
  verb: string,
  id: number,
  details: Input,
): Promise<void> {
  await recordAudit(db, {
    tenantId: change.tenantId,
    actor: change.actor,
    action: `${resource.audit}.${verb}`,
    subject: { type: resource.audit, id: String(id) },
    details,
    at: change.at,
    ...(change.requestId === undefined ? {} : { requestId: change.requestId }),
  });
  await broadcastCatalogChange(db, change.tenantId);
}

export const RESOURCE_BY_TABLE = Object.fromEntries(RESOURCES.map((r) => [r.table, r])) as Record<
  CatalogTable,
  CatalogResource
>;

/** A catalog row (as selected with `*`) in its API shape. */
export function catalogItemOf(table: CatalogTable, row: Row): CatalogItem {
  return toItem(RESOURCE_BY_TABLE[table], row);
}
