import { clickFacts } from "../../src/features/click-facts/index.js";
import type { ClickBuffer } from "../../src/features/tracking/click-buffer.js";
import { type Click, clickBatchStatement } from "../../src/features/tracking/click-writer.js";
import type { Db } from "../../src/platform/db/index.js";
import { newId } from "../../src/platform/ids.js";
import type { Catalog, Explained, FactsCost, Recorded } from "./protocol.js";

/**
 * The click path's stages measured apart from the route, in the service process: the buffer
 * (add), the writes (trackers, the batch statement, the click hooks, the transaction), and inside
 * the database the statement's own steps. The clicks are the load's: one link and source, one
 * visitor (127.0.0.1 and the load's user agent), gclid and a tracker name.
 */

const USER_AGENT =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";

function clicksLike(catalog: Catalog, count: number): Click[] {
  const at = new Date();
  return Array.from({ length: count }, () => ({
    id: newId("clk"),
    tenantId: catalog.tenantId,
    at,
    linkId: catalog.linkId,
    accountId: catalog.accountId,
    brandId: catalog.brandId,
    programId: catalog.programId,
    trafficSourceId: catalog.trafficSourceId,
    trackerId: null,
    trackerName: "benchtracker",
    gclid: "abc",
    fbclid: null,
    msclkid: null,
    obclid: null,
    parameterA: null,
    parameterB: null,
    externalClickId: null,
    utm: null,
    userAgent: USER_AGENT,
    ip: "127.0.0.1",
    country: null,
    referrer: null,
  }));
}

const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

const NO_HINTS = { brands: null, mobile: null, platform: null };

/** A public-looking address for lookup `i`: IPv4 spread over the space, every tenth one IPv6. */
function addressOf(i: number): string {
  const n = Math.imul(i + 1, 2654435761) >>> 0;
  if (i % 10 === 9) return `2a0${i % 7}:${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}::1`;
  return `${((n >>> 24) % 222) + 1}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/**
 * What the click facts cost a click, apart from the route: the country and data-center lookups
 * for a different address each time, the user agent from the cache (as under load, where user
 * agents repeat); and a user agent never seen before, parsed.
 */
export function factsCost(lookups: number): FactsCost {
  // Warm: the databases are loaded and the load's user agent is cached.
  clickFacts({ ip: "127.0.0.1", userAgent: USER_AGENT, hints: NO_HINTS, cdnCountry: null });
  const started = cpuUs();
  for (let i = 0; i < lookups; i++)
    clickFacts({ ip: addressOf(i), userAgent: USER_AGENT, hints: NO_HINTS, cdnCountry: null });
  const perClick = cpuUs() - started;
  const parsing = cpuUs();
  for (let i = 0; i < lookups; i++) {
    const agent = USER_AGENT.replace("126.0.0.0", `126.${i % 1000}.${Math.floor(i / 1000)}.0`);
    clickFacts({ ip: "127.0.0.1", userAgent: agent, hints: NO_HINTS, cdnCountry: null });
  }
  const newAgent = cpuUs() - parsing;
  return { lookups, perClickUs: perClick / lookups, newAgentUs: newAgent / lookups };
}

/** Adds `count` clicks to the app's own buffer, then waits until they are written. */
export async function recordWithoutRoute(
  _db: Db,
  buffer: ClickBuffer,
  catalog: Catalog,
  count: number,
): Promise<Recorded> {
  const clicks = clicksLike(catalog, count);
  await buffer.flush();
  const started = cpuUs();
  // Synchronous: the writes the full batches start run after this loop.
  for (const click of clicks) buffer.add(click);
  const added = cpuUs();
  const wallStarted = performance.now();
  await buffer.flush();
  return {
    clicks: count,
    bufferUs: added - started,
    writeUs: cpuUs() - added,
    writeWallMs: performance.now() - wallStarted,
  };
}

interface PlanNode {
  "Node Type"?: string;
  "Subplan Name"?: string;
  "Actual Total Time"?: number;
  "Actual Loops"?: number;
  Plans?: PlanNode[];
}

const total = (node: PlanNode) => (node["Actual Total Time"] ?? 0) * (node["Actual Loops"] ?? 1);

/** Exclusive time of every node, summed by the CTE it belongs to ("CTE written" becomes "written"). */
function byStep(node: PlanNode, step: string, into: Record<string, number>): void {
  const name = node["Subplan Name"]?.replace(/^CTE /, "") ?? step;
  const children = node.Plans ?? [];
  // A CTE is computed by the first scan that pulls it, and timed again under its own subplan:
  // the scan's time is the CTE's, not its own. An InitPlan is a step's way to wait for another.
  const own =
    node["Node Type"] === "CTE Scan" ? 0 : total(node) - children.reduce((sum, child) => sum + total(child), 0);
  if (!name.startsWith("InitPlan")) into[name] = (into[name] ?? 0) + Math.max(0, own);
  for (const child of children) byStep(child, name.startsWith("InitPlan") ? step : name, into);
}

class RolledBack extends Error {}

/** EXPLAIN ANALYZE of one batch's statement, rolled back: nothing it writes is kept. */
export async function explainClickBatch(db: Db, catalog: Catalog, count: number): Promise<Explained> {
  const clicks = clicksLike(catalog, count);
  let result: Explained | undefined;
  await db
    .transaction(async (tx) => {
      const { text, params } = await clickBatchStatement(tx, clicks, new Date());
      const rows = await tx.query<Record<string, unknown>>(`explain (analyze, format json) ${text}`, params);
      const raw = rows[0] === undefined ? undefined : Object.values(rows[0])[0];
      const parsed = (typeof raw === "string" ? JSON.parse(raw) : raw) as [
        { Plan: PlanNode; "Execution Time": number; "Planning Time": number },
      ];
      const steps: Record<string, number> = {};
      byStep(parsed[0].Plan, "select", steps);
      result = {
        clicks: count,
        executionMs: parsed[0]["Execution Time"],
        planningMs: parsed[0]["Planning Time"],
        byStep: steps,
      };
      throw new RolledBack();
    })
    .catch((error: unknown) => {
      if (!(error instanceof RolledBack)) throw error;
    });
  if (result === undefined) throw new Error("EXPLAIN gave no plan");
  return result;
}
