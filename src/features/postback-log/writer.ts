import type { FastifyBaseLogger } from "fastify";
import type { Queryable } from "../../platform/db/index.js";
import { newId } from "../../platform/ids.js";
import type { PostbackLogEntry } from "./entry.js";

/**
 * Writes log lines, one statement however many (an API batch is up to 1,000 items). Called after
 * the conversions are recorded and before the answer, so a caller who reads the log after its
 * answer finds its line. The log is a record of what happened, never a condition of it: a failed
 * write is logged (without the fields sent) and the call is answered as it would have been.
 */
export async function writePostbackLog(
  db: Queryable,
  log: FastifyBaseLogger,
  entries: readonly PostbackLogEntry[],
): Promise<void> {
  if (entries.length === 0) return;
  try {
    await db.query(
      `insert into postback_log
         (id, tenant_id, at, via, outcome, reason, field, conversion_id, click_id, external_id, type, query)
       select * from unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[],
         $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::jsonb[])`,
      [
        entries.map(() => newId("pbl")),
        entries.map((e) => e.tenantId),
        entries.map((e) => e.at),
        entries.map((e) => e.via),
        entries.map((e) => e.outcome),
        entries.map((e) => e.reason),
        entries.map((e) => e.field),
        entries.map((e) => e.conversionId),
        entries.map((e) => e.clickId),
        entries.map((e) => e.externalId),
        entries.map((e) => e.type),
        entries.map((e) => JSON.stringify(e.query)),
      ],
    );
  } catch (error) {
    log.warn({ err: error, lines: entries.length }, "postback log lines could not be written");
  }
}
