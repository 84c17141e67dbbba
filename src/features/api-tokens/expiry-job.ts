import type { Db } from "../../platform/db/index.js";
import type { Job } from "../../platform/jobs.js";
import { raiseIssue } from "../issues/index.js";
import { emitNotification } from "../notifications/index.js";

const DAY_MS = 86_400_000;
const WARN_DAYS = 7;

interface ExpiringRow {
  id: string;
  tenant_id: string;
  name: string;
  expiration_date: Date;
  last_used_at: Date | null;
}

/**
 * Daily at 08:00 UTC (spec part 3): a key whose expiry date (UTC) is 7 days away or less gets an
 * `api_token_expiring` issue (warning), inside its last 24 hours the issue escalates (error),
 * and once expired, when the key no longer works, it turns critical. Deleting the key closes
 * the issue.
 */
export function apiTokenExpiryJob(db: Db): Job {
  return {
    name: "api-token-expiry",
    description: "Raises, escalates and marks critical the expiry issues of API keys",
    cron: "0 8 * * *",
    async run(now) {
      const rows = await db.query<ExpiringRow>(
        "select id, tenant_id, name, expiration_date, last_used_at from api_tokens where expiration_date < $1 order by expiration_date",
        // Counted in calendar days: on the 13th, a key expiring any time on the 20th is 7 days out.
        [new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS + (WARN_DAYS + 1) * DAY_MS)],
      );
      const summary = { checked: rows.length, opened: 0, escalated: 0, unchanged: 0 };
      for (const row of rows) {
        const expiresAt = new Date(row.expiration_date);
        const left = expiresAt.getTime() - now.getTime();
        const severity = left <= 0 ? "critical" : left <= DAY_MS ? "error" : "warning";
        const day = expiresAt.toISOString().slice(0, 10);
        const title =
          severity === "critical"
            ? `API key '${row.name}' expired on ${day} and no longer works`
            : `API key '${row.name}' expires on ${day}`;
        const { change } = await db.transaction(async (tx) => {
          const raised = await raiseIssue(
            tx,
            {
              tenantId: row.tenant_id,
              kind: "api_token_expiring",
              severity,
              title,
              subject: { type: "api_token", id: row.id, name: row.name },
              details: {
                keyName: row.name,
                expirationDate: expiresAt.toISOString(),
                lastUsedAt: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
              },
            },
            now,
          );
          // Operational events: the warning when the issue opens, the expiry when it turns critical.
          const token = { id: row.id, name: row.name, expirationDate: expiresAt.toISOString() };
          const turned = raised.change === "opened" || raised.change === "escalated";
          const event =
            severity === "critical" && turned
              ? "api_token.expired"
              : raised.change === "opened"
                ? "api_token.expiring"
                : null;
          if (event) await emitNotification(tx, row.tenant_id, event, token, now);
          return raised;
        });
        if (change === "opened") summary.opened += 1;
        else if (change === "escalated") summary.escalated += 1;
        else summary.unchanged += 1;
      }
      return summary;
    },
  };
}
