import type { Queryable } from "./db/index.js";
import { SealedBox, type SecretsKeyring } from "./sealed-box.js";

/** A column of sealed secrets: its table, the table's key column, and the label it is sealed under. */
export interface SealedColumn {
  table: string;
  key: string;
  column: string;
  label: string;
}

export interface ResealCount {
  table: string;
  column: string;
  /** Sealed again with the first key of SECRETS_KEY. */
  resealed: number;
  /** Already sealed with it: nothing to do. */
  current: number;
  /** Sealed by a key the keyring no longer has: to be entered again (docs/operations.md). */
  unreadable: number;
  /** Changed by the service between the read and the write: left as the service wrote it. */
  changedMeanwhile: number;
}

const BATCH = 200;

/**
 * Seals every stored secret of `column` with the keyring's first key (`npm run secrets:reseal`).
 * It works through the table in batches of 200 rows in key order, each value written only if it
 * is still what was read, so the service may keep running (on PostgreSQL) and a second run finds
 * nothing to do. Values never leave this function: `progress` gets counts.
 */
export async function resealColumn(
  db: Queryable,
  keyring: SecretsKeyring,
  target: SealedColumn,
  progress: (count: ResealCount) => void = () => {},
): Promise<ResealCount> {
  const box = new SealedBox(keyring, target.label, () => new Error("unreadable"));
  const count: ResealCount = {
    table: target.table,
    column: target.column,
    resealed: 0,
    current: 0,
    unreadable: 0,
    changedMeanwhile: 0,
  };
  // Identifiers from the features' own descriptions, never from input.
  const { table, key, column } = target;
  let after: string | null = null;
  for (;;) {
    const rows: { k: string; v: string }[] = await db.query<{ k: string; v: string }>(
      `select ${key}::text as k, ${column} as v from ${table}
        where ${column} is not null and ($1::text is null or ${key}::text > $1::text)
        order by ${key}::text limit ${BATCH}`,
      [after],
    );
    for (const row of rows) {
      if (box.isCurrent(row.v)) {
        count.current++;
        continue;
      }
      let plain: string;
      try {
        plain = box.open(row.v);
      } catch {
        count.unreadable++;
        continue;
      }
      const updated = await db.query(
        `update ${table} set ${column} = $1 where ${key}::text = $2 and ${column} = $3 returning 1`,
        [box.seal(plain), row.k, row.v],
      );
      if (updated.length > 0) count.resealed++;
      else count.changedMeanwhile++;
    }
    if (rows.length < BATCH) break;
    after = rows[rows.length - 1]?.k ?? null;
    progress(count);
  }
  progress(count);
  return count;
}
