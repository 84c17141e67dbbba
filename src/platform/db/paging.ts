import type { Queryable } from "./types.js";

export interface PageSql {
  /** Columns to select for the page's rows. */
  select: string;
  /** `table alias [joins]`, shared by the count and the page. */
  from: string;
  /** Condition over `params` ($1 ... $n); the count covers the whole filtered set. */
  where: string;
  params: unknown[];
  /** Must end in a unique column so pages never overlap. */
  orderBy: string;
}

/** One page of rows plus the size of the whole filtered set, as every list endpoint answers. */
export async function selectPage<T extends object>(
  db: Queryable,
  sql: PageSql,
  page: { offset: number; limit: number },
): Promise<{ rows: T[]; total: number }> {
  const n = sql.params.length;
  const [count] = await db.query<{ n: number }>(
    `select count(*)::int as n from ${sql.from} where ${sql.where}`,
    sql.params,
  );
  const rows = await db.query<T>(
    `select ${sql.select} from ${sql.from} where ${sql.where} order by ${sql.orderBy} offset $${n + 1} limit $${n + 2}`,
    [...sql.params, page.offset, page.limit],
  );
  return { rows, total: count?.n ?? 0 };
}
