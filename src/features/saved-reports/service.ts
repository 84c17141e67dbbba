import { isUniqueViolation, type Queryable } from "../../platform/db/index.js";
import { selectPage } from "../../platform/db/paging.js";
import { containsPattern } from "../../platform/db/search.js";
import { ApiError } from "../../platform/http/errors.js";
import { newId } from "../../platform/ids.js";
import { type Actor, recordAudit } from "../audit/index.js";
import { SAVED_REPORT_LIMITS as L } from "./limits.js";
import type { SavedReportKind } from "./schemas.js";

export interface SavedReport {
  id: string;
  name: string;
  report: SavedReportKind;
  params: Record<string, string>;
  createdBy: { id: string; name: string };
  createdAt: string;
}

/** Who acts on a saved report: changing or deleting another's needs account.admin. */
export interface SavedReportEditor {
  actor: Extract<Actor, { type: "user" | "api_key" }>;
  isAdmin: boolean;
}

interface Row {
  id: string;
  name: string;
  report: SavedReportKind;
  params: Record<string, string> | string;
  created_by_id: string;
  created_by_name: string;
  created_at: Date;
}

const COLUMNS = "s.id, s.name, s.report, s.params, s.created_by_id, s.created_by_name, s.created_at";
const NAME_INDEX = "saved_reports_name_unique";
const PARAM_NAME = /^[A-Za-z0-9_-]+$/;

function toSavedReport(row: Row): SavedReport {
  return {
    id: row.id,
    name: row.name,
    report: row.report,
    // Drivers differ: pg parses jsonb, a text round trip does not.
    params: typeof row.params === "string" ? (JSON.parse(row.params) as Record<string, string>) : row.params,
    createdBy: { id: row.created_by_id, name: row.created_by_name },
    createdAt: row.created_at.toISOString(),
  };
}

function nameTaken(name: string): ApiError {
  const message = `A saved report named '${name}' already exists`;
  return new ApiError("conflict", message, { errors: [{ path: "name", message: "is already taken" }] });
}

// The unique index (tenant, lower(name)) decides a taken name, also between concurrent saves.
const isNameTaken = (error: unknown) => isUniqueViolation(error, NAME_INDEX);

/** Trims the name; the schema bounds its length, a blank one is refused here. */
function cleanName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0) throw ApiError.validation("name", "must not be blank");
  return name;
}

/** Parameter names are query parameter names (the schema bounds their count and values). */
function checkParams(params: Record<string, string>): Record<string, string> {
  for (const key of Object.keys(params)) {
    if (key.length > L.paramNameLength || !PARAM_NAME.test(key)) {
      throw ApiError.validation(
        `params.${key.slice(0, L.paramNameLength)}`,
        `must be named with letters, digits, '_' or '-', at most ${L.paramNameLength} characters`,
      );
    }
  }
  return params;
}

/**
 * Saves a report's parameters under a name. The tenant's row is locked first so two concurrent
 * saves cannot both pass the per-tenant cap (`db` must be a transaction).
 */
export async function createSavedReport(
  db: Queryable,
  tenantId: string,
  input: { name: string; report: SavedReportKind; params?: Record<string, string> | undefined },
  actor: SavedReportEditor["actor"],
  now: Date,
): Promise<SavedReport> {
  const name = cleanName(input.name);
  const params = checkParams(input.params ?? {});
  await db.query("select 1 from tenants where id = $1 for update", [tenantId]);
  const [count] = await db.query<{ n: number }>("select count(*)::int as n from saved_reports where tenant_id = $1", [
    tenantId,
  ]);
  if ((count?.n ?? 0) >= L.perTenant) {
    throw ApiError.conflict(`This tenant already has ${L.perTenant} saved reports, the most allowed; delete one first`);
  }
  const id = newId("srp");
  try {
    await db.query(
      `insert into saved_reports (id, tenant_id, name, report, params, created_by_id, created_by_name, created_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [id, tenantId, name, input.report, JSON.stringify(params), actor.id, actor.name, now],
    );
  } catch (error) {
    if (isNameTaken(error)) throw nameTaken(name);
    throw error;
  }
  await recordAudit(db, {
    tenantId,
    actor,
    action: "saved_report.created",
    subject: { type: "saved_report", id },
    details: { name, report: input.report },
    at: now,
  });
  return {
    id,
    name,
    report: input.report,
    params,
    createdBy: { id: actor.id, name: actor.name },
    createdAt: now.toISOString(),
  };
}

export async function listSavedReports(
  db: Queryable,
  tenantId: string,
  query: { offset: number; limit: number; report?: SavedReportKind | undefined; search?: string | undefined },
): Promise<{ items: SavedReport[]; total: number }> {
  const { rows, total } = await selectPage<Row>(
    db,
    {
      select: COLUMNS,
      from: "saved_reports s",
      where: "s.tenant_id = $1 and ($2::text is null or s.report = $2) and ($3::text is null or lower(s.name) like $3)",
      params: [tenantId, query.report ?? null, containsPattern(query.search)],
      orderBy: "lower(s.name), s.id",
    },
    query,
  );
  return { items: rows.map(toSavedReport), total };
}

export async function getSavedReport(db: Queryable, tenantId: string, id: string): Promise<SavedReport | null> {
  const [row] = await db.query<Row>(`select ${COLUMNS} from saved_reports s where s.tenant_id = $1 and s.id = $2`, [
    tenantId,
    id,
  ]);
  return row ? toSavedReport(row) : null;
}

/** Loads the tenant's report for a change: 404 when absent, 403 when another's and not an admin. */
async function editable(db: Queryable, tenantId: string, id: string, editor: SavedReportEditor): Promise<SavedReport> {
  const found = await getSavedReport(db, tenantId, id);
  if (!found) throw ApiError.notFound("Saved report", id);
  if (found.createdBy.id !== editor.actor.id && !editor.isAdmin) {
    throw ApiError.forbidden("Only its creator or an account admin can change or delete this saved report");
  }
  return found;
}

/** Renames a saved report and/or replaces its parameters. */
export async function updateSavedReport(
  db: Queryable,
  tenantId: string,
  id: string,
  patch: { name?: string | undefined; params?: Record<string, string> | undefined },
  editor: SavedReportEditor,
  now: Date,
): Promise<SavedReport> {
  const name = patch.name === undefined ? undefined : cleanName(patch.name);
  const params = patch.params === undefined ? undefined : checkParams(patch.params);
  const found = await editable(db, tenantId, id, editor);
  try {
    await db.query(
      `update saved_reports set name = coalesce($3, name), params = coalesce($4::jsonb, params)
       where tenant_id = $1 and id = $2`,
      [tenantId, id, name ?? null, params === undefined ? null : JSON.stringify(params)],
    );
  } catch (error) {
    if (name !== undefined && isNameTaken(error)) throw nameTaken(name);
    throw error;
  }
  await recordAudit(db, {
    tenantId,
    actor: editor.actor,
    action: "saved_report.updated",
    subject: { type: "saved_report", id },
    details: { name: name ?? found.name },
    at: now,
  });
  return { ...found, name: name ?? found.name, params: params ?? found.params };
}

export async function deleteSavedReport(
  db: Queryable,
  tenantId: string,
  id: string,
  editor: SavedReportEditor,
  now: Date,
): Promise<void> {
  const found = await editable(db, tenantId, id, editor);
  await db.query("delete from saved_reports where tenant_id = $1 and id = $2", [tenantId, id]);
  await recordAudit(db, {
    tenantId,
    actor: editor.actor,
    action: "saved_report.deleted",
    subject: { type: "saved_report", id },
    details: { name: found.name },
    at: now,
  });
}
