import { ApiError } from "../http/errors.js";
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

/**
 * One page of rows plus the size of the whole filtered set, as every list endpoint answers.
 *
 * The page is read with one row more than asked: a page that ends the set (most lists fit on
 * one page) then tells the total itself, offset plus its rows, and costs one statement. The
 * total is counted only when rows remain after the page, or when the page is empty past the
 * start (the offset may lie beyond the set).
 */
export async function selectPage<T extends object>(
  db: Queryable,
  sql: PageSql,
  page: { offset: number; limit: number },
): Promise<{ rows: T[]; total: number }> {
  // The query schemas bound both; a route whose schema does not still gets a 400, never a
  // bigint overflow from the database (a 500).
  if (!Number.isSafeInteger(page.offset) || page.offset < 0) {
    throw ApiError.validation("offset", `must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`);
  }
  if (!Number.isSafeInteger(page.limit) || page.limit < 1) {
    throw ApiError.validation("limit", "must be a whole number of at least 1");
  }
  const n = sql.params.length;
  const rows = await db.query<T>(
    `select ${sql.select} from ${sql.from} where ${sql.where} order by ${sql.orderBy} offset $${n + 1} limit $${n + 2}`,
    [...sql.params, page.offset, page.limit + 1],
  );
  if (rows.length > page.limit) {
    rows.length = page.limit;
  } else if (rows.length > 0 || page.offset === 0) {
    return { rows, total: page.offset + rows.length };
  }
  const [count] = await db.query<{ n: number }>(
    `select count(*)::int as n from ${sql.from} where ${sql.where}`,
    sql.params,
  );
  return { rows, total: count?.n ?? 0 };
}

/**
 * A WHERE clause built condition by condition, with its parameters: `$` in a condition stands
 * for its value's placeholder. Every list endpoint filters this way.
 */
export class Conditions {
  readonly params: unknown[];
  private readonly parts: string[];

  /** Starts with a condition on `$1`, `$2`, ... over `params` (the tenant, usually). */
  constructor(first: string, ...params: unknown[]) {
    this.parts = [first];
    this.params = params;
  }

  /** Adds `condition` with `value` in place of `$`; an undefined value adds nothing. */
  add(condition: string, value: unknown): this {
    if (value === undefined) return this;
    this.params.push(value);
    this.parts.push(condition.replace("$", `$${this.params.length}`));
    return this;
  }

  /** Adds a condition that needs no value when `test` holds. */
  when(test: boolean, condition: string): this {
    if (test) this.parts.push(condition);
    return this;
  }

  get sql(): string {
    return this.parts.join(" and ");
  }
}
