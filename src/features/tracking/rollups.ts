import { prepared, type Queryable } from "../../platform/db/index.js";
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
  /** The click's device type, OS and browser families ('' unknown): device_rollups' keys, not daily_rollups'. */
  device: string;
  os: string;
  browser: string;
  /** The click's sub-ids pa and pb ('' none): the sub-id rollups' keys. */
  parameterA: string;
  parameterB: string;
  /** The amount's ISO 4217 currency; '' on rows of clicks and of conversions without a value. */
  currency: string;
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
  "currency",
];
/** daily_rollups' dimensions: its key after the tenant and the day. */
export const DAILY_DIMENSIONS: readonly string[] = KEY_COLUMNS.slice(2);
/** Keys of coarse rollups that daily_rollups does not have: the click's facts and sub-ids. */
export const FACT_COLUMNS = ["device", "os", "browser", "parameter_a", "parameter_b"] as const;
const COUNT_COLUMNS = ["clicks", "unique_clicks", ...TYPE_COLUMNS.map((c) => `${c}_count`)];
const AMOUNT_COLUMNS = TYPE_COLUMNS.map((c) => `${c}_amount`);
const DAILY_COLUMNS = [...KEY_COLUMNS, ...COUNT_COLUMNS, ...AMOUNT_COLUMNS];
const ALL_COLUMNS = [...DAILY_COLUMNS, ...FACT_COLUMNS];
const ARRAY_TYPES = [
  "text[]",
  "date[]",
  ...Array(5).fill("bigint[]"),
  "bigint[]",
  "text[]",
  "text[]",
  ...COUNT_COLUMNS.map(() => "bigint[]"),
  ...AMOUNT_COLUMNS.map(() => "numeric[]"),
  ...FACT_COLUMNS.map(() => "text[]"),
];

/**
 * Lengths of the aligned blocks of the spanned rollups, in days (1: a day); an aligned block
 * starts a multiple of its span after 1970-01-01. The writers write days only; the job
 * rollup-blocks writes the longer blocks of closed days (src/features/reports/blocks.ts).
 */
export const ROLLUP_SPANS = [1, 2, 4, 8, 16, 32, 64] as const;

/**
 * The spanned rollups also hold prefixes: from the first day of each epoch of this many days (a
 * multiple of it after 1970-01-01) to each of its closed days, a block of any span up to it. A
 * window within an epoch is then the difference of two prefixes (src/features/reports/sources.ts).
 */
export const EPOCH_DAYS = 64;

/**
 * And tails: the blocks that end on the last folded day, of every span up to this many days. A
 * window ending today (the reports' default, and the usual "last N days") is then one tail and
 * today's rows, with nothing subtracted (src/features/reports/sources.ts).
 */
export const TAIL_DAYS = 64;

/** How many day rows a block row sums (1 on a day's row): a group is in a window while its sum is above 0. */
export const DAY_ROWS = "day_rows";

/** The measure columns the reports read: the coarser rollups keep only these. */
export const REPORT_MEASURES = [
  "clicks",
  "unique_clicks",
  "bot_clicks",
  "signup_count",
  "ftd_count",
  "qualifier_count",
  "deposit_count",
  "cpa_count",
  "revshare_count",
  "flatfee_count",
  "deposit_amount",
  "cpa_amount",
  "revshare_amount",
  "flatfee_amount",
] as const;

/** A rollup coarser than daily_rollups (migration 0007), kept by the same writes. */
export interface CoarseRollup {
  table: string;
  /** Its dimensions after tenant_id and the day (span and day when spanned), in key order. */
  keys: readonly string[];
  /** Holds blocks of ROLLUP_SPANS days (written by the job) as well as single days (span 1). */
  spanned: boolean;
  /**
   * A sub-id's rollup: at most SUB_ID_VALUES_PER_DAY values of `column` a tenant and day; a day
   * with a value left out is marked in sub_id_rollup_gaps under `parameter`.
   */
  capped?: { column: string; parameter: "a" | "b" };
}

/** In the order every writer updates them, after daily_rollups. */
export const COARSE_ROLLUPS: readonly CoarseRollup[] = [
  {
    table: "brand_rollups",
    keys: ["brand_id", "program_id", "traffic_source_id", "country", "currency"],
    spanned: false,
  },
  { table: "account_rollups", keys: ["account_id", "program_id", "currency"], spanned: true },
  {
    table: "account_source_rollups",
    keys: ["account_id", "traffic_source_id", "program_id", "currency"],
    spanned: true,
  },
  // The click's facts (migration 0025): the device, OS and browser breakdowns read it.
  {
    table: "device_rollups",
    keys: ["brand_id", "program_id", "traffic_source_id", "device", "os", "browser", "currency"],
    spanned: false,
  },
  // The sub-ids (migration 0026), each with at most about SUB_ID_VALUES_PER_DAY values a day.
  {
    table: "sub_id_a_rollups",
    keys: ["traffic_source_id", "parameter_a", "currency"],
    spanned: false,
    capped: { column: "parameter_a", parameter: "a" },
  },
  {
    table: "sub_id_b_rollups",
    keys: ["traffic_source_id", "parameter_b", "currency"],
    spanned: false,
    capped: { column: "parameter_b", parameter: "b" },
  },
];

/**
 * The values of a sub-id a rollup takes a tenant and day: a visitor chooses them (`?pa=`), so one
 * value per click would make the rollup as long as the clicks. Past it, a new value is left out
 * and the day marked in sub_id_rollup_gaps; two writers at once may each add a batch's values
 * before they see the other's.
 */
export const SUB_ID_VALUES_PER_DAY = 10_000;

/**
 * CTEs (`coarse_1`, `coarse_2`, ...) adding the rows of `source`, which has daily_rollups' key
 * columns and `measures`, to every coarse rollup (to its days, span 1, when spanned), then
 * marking in rollup_block_dirty every day before today (UTC) they change, whose blocks the
 * reports then stop reading until the job rollup-blocks has written them again. Like
 * daily_rollups, each table's rows are grouped and written in key order, and the tables one
 * after the other (each CTE starts once the one before it, the first after `after`, has
 * finished): every writer locks rows in the same order, so two writers cannot deadlock. A mark
 * is an upsert that locks its row, so the job, which deletes the marks before reading the days,
 * waits for a writer that marked a day and then sees its rows. A source row whose measures are
 * all zero still makes its row, so a coarse rollup has a row wherever daily_rollups has one.
 */
export function coarseRollupCtes(source: string, measures: readonly string[], after: string): string {
  const kept = REPORT_MEASURES.filter((m) => measures.includes(m));
  let previous = after;
  const ctes = COARSE_ROLLUPS.map((rollup, i) => {
    const keys = rollup.spanned ? ["tenant_id", "span", "day", ...rollup.keys] : ["tenant_id", "day", ...rollup.keys];
    const values = rollup.spanned
      ? ["r.tenant_id", "1", "r.day", ...rollup.keys.map((k) => `r.${k}`)]
      : ["r.tenant_id", "r.day", ...rollup.keys.map((k) => `r.${k}`)];
    const positions = keys.map((_, n) => n + 1).join(", ");
    const name = `coarse_${i + 1}`;
    const capped = rollup.capped === undefined ? undefined : cappedSource(rollup, source, previous, name);
    const sql = `${capped === undefined ? "" : `${capped.ctes},\n`}${name} as (
  insert into ${rollup.table} as t (${[...keys, ...kept].join(", ")})
  select ${[...values, ...kept.map((m) => `sum(r.${m})`)].join(", ")}
  from ${capped?.rows ?? source} r
  where ${capped === undefined ? `(select count(*) from ${previous}) >= 0` : "r.kept"}
  group by ${positions}
  order by ${positions}
  on conflict (${keys.join(", ")}) do update set
    ${kept.map((m) => `${m} = t.${m} + excluded.${m}`).join(", ")}
  returning 1
)${capped === undefined ? "" : `,\n${capped.gaps}`}`;
    previous = capped?.last ?? name;
    return sql;
  });
  ctes.push(`${LAST_COARSE_CTE} as (
  insert into rollup_block_dirty as t (tenant_id, day)
  select distinct r.tenant_id, r.day
  from ${source} r
  where r.day < (now() at time zone 'UTC')::date and (select count(*) from ${previous}) >= 0
  order by 1, 2
  on conflict (tenant_id, day) do update set day = excluded.day
  returning 1
)`);
  return ctes.join(",\n");
}

/**
 * For a capped rollup written by CTE `name`: `<name>_known`, the source rows with `known`: a row
 * without a value, or of a value its day has already; `<name>_days`, for the days with a value
 * new to them only, how many values the day has (counted up to the cap, on its key's tenant and
 * day; a day already marked in sub_id_rollup_gaps counts as full without a count); `<name>_rows`,
 * the source rows with `kept`: known, or of a day under the cap; and `<name>_gaps`, which marks
 * the days of rows not kept, once `name` has run. All read the rollup as it was before the
 * statement. Counting only for a new value keeps the common write (values the day has seen) from
 * reading up to SUB_ID_VALUES_PER_DAY index entries each time.
 */
function cappedSource(
  rollup: CoarseRollup,
  source: string,
  previous: string,
  name: string,
): { ctes: string; rows: string; gaps: string; last: string } {
  const { column, parameter } = rollup.capped ?? { column: "", parameter: "a" };
  const same = ["tenant_id", "day", ...rollup.keys].map((k) => `x.${k} = r.${k}`).join(" and ");
  const ctes = `${name}_known as (
  select r.*, (r.${column} = '' or exists (select 1 from ${rollup.table} x where ${same})) as known
  from ${source} r
  where (select count(*) from ${previous}) >= 0
),
${name}_days as (
  select d.tenant_id, d.day,
    case when exists (select 1 from sub_id_rollup_gaps g
                      where g.tenant_id = d.tenant_id and g.parameter = '${parameter}' and g.day = d.day)
      then ${SUB_ID_VALUES_PER_DAY}
      else (select count(*) from (select 1 from ${rollup.table} x where x.tenant_id = d.tenant_id and x.day = d.day
              limit ${SUB_ID_VALUES_PER_DAY}) c)
    end as n
  from (select distinct k.tenant_id, k.day from ${name}_known k where not k.known) d
),
${name}_rows as (
  select k.*, (k.known or d.n < ${SUB_ID_VALUES_PER_DAY}) as kept
  from ${name}_known k left join ${name}_days d on d.tenant_id = k.tenant_id and d.day = k.day
)`;
  const gaps = `${name}_gaps as (
  insert into sub_id_rollup_gaps (tenant_id, parameter, day)
  select distinct r.tenant_id, '${parameter}', r.day from ${name}_rows r
  where not r.kept and (select count(*) from ${name}) >= 0
  order by 1, 3
  on conflict do nothing
  returning 1
)`;
  return { ctes, rows: `${name}_rows`, gaps, last: `${name}_gaps` };
}

/** The last CTE of coarseRollupCtes: reading it runs the whole chain. */
export const LAST_COARSE_CTE = "coarse_late";

// One statement for the whole batch: rows are merged into their day's totals, never replaced;
// daily_rollups first, then the coarser rollups, each in key order, then the tenant's currencies
// (report_currencies: which amounts a report has to convert). Prepared: every conversion's
// transaction and every click flush runs it.
const UPSERT = prepared(
  "rollups.upsert",
  `with input as (
  select * from unnest(${ARRAY_TYPES.map((type, i) => `$${i + 1}::${type}`).join(", ")}) as r (${ALL_COLUMNS.join(", ")})
),
daily as (
  insert into daily_rollups as t (${DAILY_COLUMNS.join(", ")})
  select ${KEY_COLUMNS.join(", ")}, ${[...COUNT_COLUMNS, ...AMOUNT_COLUMNS].map((c) => `sum(${c})`).join(", ")}
  from input
  group by ${KEY_COLUMNS.map((_, i) => i + 1).join(", ")}
  order by ${KEY_COLUMNS.map((_, i) => i + 1).join(", ")}
  on conflict (${KEY_COLUMNS.join(", ")}) do update set
  ${[...COUNT_COLUMNS, ...AMOUNT_COLUMNS].map((c) => `${c} = t.${c} + excluded.${c}`).join(",\n  ")}
  returning 1
),
${coarseRollupCtes("input", [...COUNT_COLUMNS, ...AMOUNT_COLUMNS], "daily")},
currencies as (
  insert into report_currencies (tenant_id, currency)
  select distinct r.tenant_id, r.currency from input r
  where r.currency <> '' and (select count(*) from ${LAST_COARSE_CTE}) >= 0
  order by 1, 2
  on conflict do nothing
  returning 1
)
select count(*)::int as n from currencies`,
);

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
    key.currency,
    key.device,
    key.os,
    key.browser,
    key.parameterA,
    key.parameterB,
  ].join("\u0000");
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

/** The decimal string of -value ("12.5000" -> "-12.5000"). */
export function negateAmount(value: string): string {
  return value.startsWith("-") ? value.slice(1) : `-${value}`;
}

/** Sums deltas per rollup row, so a batch touches each row once. */
export class RollupBatch {
  private readonly rows = new Map<string, { key: RollupKey; delta: RollupDelta }>();

  add(
    key: RollupKey,
    change: { clicks?: number; uniqueClicks?: number; type?: ConversionType; count?: number; amount?: string },
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
      // -1 (with the amount negated) takes a conversion back out: its status left the counted ones.
      row.delta.counts[change.type] = (row.delta.counts[change.type] ?? 0) + (change.count ?? 1);
      row.delta.amounts[change.type] = addAmounts(row.delta.amounts[change.type], change.amount ?? "0");
    }
  }

  get size(): number {
    return this.rows.size;
  }

  /**
   * Writes the batch in one statement, to daily_rollups and the coarser rollups; rows go in key
   * order (in SQL, as the click writer orders them) so that two writers lock shared rows in the
   * same order and cannot deadlock.
   */
  async write(db: Queryable): Promise<void> {
    if (this.rows.size === 0) return;
    const rows = [...this.rows.values()];
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
      rows.map((r) => r.key.currency),
      rows.map((r) => r.delta.clicks),
      rows.map((r) => r.delta.uniqueClicks),
      ...types.map((type) => rows.map((r) => r.delta.counts[type] ?? 0)),
      ...types.map((type) => rows.map((r) => r.delta.amounts[type] ?? "0")),
      rows.map((r) => r.key.device),
      rows.map((r) => r.key.os),
      rows.map((r) => r.key.browser),
      rows.map((r) => r.key.parameterA),
      rows.map((r) => r.key.parameterB),
    ];
    await db.query(UPSERT, params);
    this.rows.clear();
  }
}
