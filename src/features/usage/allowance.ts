import type { Queryable } from "../../platform/db/index.js";
import { webhookUsage } from "../outgoing-webhooks/index.js";

export interface AllowanceUsage {
  period: { from: string; to: string };
  allowance: number | null;
  used: number;
  held: number;
}

/**
 * The webhook deliveries counted this UTC calendar month against the tenant's monthly allowance
 * (null = unlimited), and the events held now for want of it: what the metering itself counts.
 */
export async function allowanceUsage(db: Queryable, tenantId: string, now: Date): Promise<AllowanceUsage | null> {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  const usage = await webhookUsage(db, tenantId, from.toISOString().slice(0, 7));
  if (!usage) return null;
  return {
    period: { from: from.toISOString(), to: to.toISOString() },
    allowance: usage.allowance,
    used: usage.sent,
    held: usage.held,
  };
}
