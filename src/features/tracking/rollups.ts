import type { Queryable } from "../../platform/db/index.js";
import type { ConversionType } from "./conversion-types.js";

/** The dimensions of one daily rollup row; 0 and '' stand for "none". */
export interface RollupKey {
  tenantId: string;
  day: string;
  accountId: number;
  linkId: number;
  brandId: number;
  programId: number;
  trafficSourceId: number;
  trackerId: number;
  country: string;
}

/** Column prefix of each conversion type's count and amount in daily_rollups. */
export const TYPE_COLUMN: Record<ConversionType, string> = {
  Click: "click",
  Signup: "signup",
  FirstTimeDeposit: "ftd",
  Qualifier: "qualifier",
  Deposit: "deposit",
  CpaCommission: "cpa",
  RevShareCommission: "revshare",
  FlatFeeCommission: "flatfee",
};

const TYPE_COLUMNS = Object.values(TYPE_COLUMN);
const KEY_COLUMNS = [
  "tenant_id",
  "day",
  "account_id",
  "link_id",
  "brand_id",
  "program_id",
  "traffic_source_id",
  "tracker_id",
  "country",
];
const COUNT_COLUMNS = ["clicks", "unique_clicks", ...TYPE_COLUMNS.map((c) => `${c}_count`)];
const AMOUNT_COLUMNS = TYPE_COLUMNS.map((c) => `${c}_amount`);
const ALL_COLUMNS = [...KEY_COLUMNS, ...COUNT_COLUMNS, ...AMOUNT_COLUMNS];
const ARRAY_TYPES = [
  "text[]",
  "date[]",
  ...Array(5).fill("bigint[]"),
  "bigint[]",
  "text[]",
  ...COUNT_COLUMNS.map(() => "bigint[]"),
  ...AMOUNT_COLUMNS.map(() => "numeric[]"),
];

// One statement for the whole batch: rows are merged into their day's totals, never replaced.
const UPSERT = `insert into daily_rollups (${ALL_COLUMNS.join(", ")})
  select * from unnest(${ARRAY_TYPES.map((type, i) => `$${i + 1}::${type}`).join(", ")})
  on conflict (${KEY_COLUMNS.join(", ")}) do update set
  ${[...COUNT_COLUMNS, ...AMOUNT_COLUMNS].map((c) => `${c} = daily_rollups.${c} + excluded.${c}`).join(",\n  ")}`;

/** Counts to add to one rollup row. Amounts are decimal strings (numeric, never float). */
export interface RollupDelta {
  clicks: number;
  uniqueClicks: number;
  counts: Partial<Record<ConversionType, number>>;
  amounts: Partial<Record<ConversionType, string>>;
}

function keyString(key: RollupKey): string {
  return [
    key.tenantId,
    key.day,
    key.accountId,
    key.linkId,
    key.brandId,
    key.programId,
    key.trafficSourceId,
    key.trackerId,
    key.country,
  ].join("|");
}

/** Adds decimal strings exactly: scaled to 4 places as bigints. */
export function addAmounts(a: string | undefined, b: string): string {
  const scale = (value: string): bigint => {
    const negative = value.startsWith("-");
    const [whole = "0", fraction = ""] = value.replace("-", "").split(".");
    const scaled = BigInt(whole) * 10_000n + BigInt(fraction.padEnd(4, "0").slice(0, 4));
    return negative ? -scaled : scaled;
  };
  const sum = scale(a ?? "0") + scale(b);
  const sign = sum < 0n ? "-" : "";
  const abs = sum < 0n ? -sum : sum;
  return `${sign}${abs / 10_000n}.${(abs % 10_000n).toString().padStart(4, "0")}`;
}

/** Sums deltas per rollup row, so a batch touches each row once. */
export class RollupBatch {
  private readonly rows = new Map<string, { key: RollupKey; delta: RollupDelta }>();

  add(
    key: RollupKey,
    change: { clicks?: number; uniqueClicks?: number; type?: ConversionType; amount?: string },
  ): void {
    const id = keyString(key);
    let row = this.rows.get(id);
    if (!row) {
      row = { key, delta: { clicks: 0, uniqueClicks: 0, counts: {}, amounts: {} } };
      this.rows.set(id, row);
    }
    row.delta.clicks += change.clicks ?? 0;
    row.delta.uniqueClicks += change.uniqueClicks ?? 0;
    if (change.type) {
      row.delta.counts[change.type] = (row.delta.counts[change.type] ?? 0) + 1;
      row.delta.amounts[change.type] = addAmounts(row.delta.amounts[change.type], change.amount ?? "0");
    }
  }

  get size(): number {
    return this.rows.size;
  }

  /**
   * Writes the batch in one upsert. Rows go in key order so that two nodes' batches lock shared
   * rows in the same order and cannot deadlock.
   */
  async write(db: Queryable): Promise<void> {
    if (this.rows.size === 0) return;
    const rows = [...this.rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    const types = Object.keys(TYPE_COLUMN) as ConversionType[];
    const params: unknown[][] = [
      rows.map((r) => r.key.tenantId),
      rows.map((r) => r.key.day),
      rows.map((r) => r.key.accountId),
      rows.map((r) => r.key.linkId),
      rows.map((r) => r.key.brandId),
      rows.map((r) => r.key.programId),
      rows.map((r) => r.key.trafficSourceId),
      rows.map((r) => r.key.trackerId),
      rows.map((r) => r.key.country),
      rows.map((r) => r.delta.clicks),
      rows.map((r) => r.delta.uniqueClicks),
      ...types.map((type) => rows.map((r) => r.delta.counts[type] ?? 0)),
      ...types.map((type) => rows.map((r) => r.delta.amounts[type] ?? "0")),
    ];
    await db.query(UPSERT, params);
    this.rows.clear();
  }
}
