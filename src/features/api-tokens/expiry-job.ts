import type { Db } from "../../platform/db/index.js";
import { DAY_MS, HOUR_MS } from "../../platform/durations.js";
import type { Job } from "../../platform/jobs.js";
import { raiseIssue } from "../issues/index.js";
import { emitNotification } from "../notifications/index.js";

const WARN_DAYS = 7;
/** The UTC hour of the daily run that raises and escalates expiry issues (docs/auth-and-tokens.md). */
const DAILY_HOUR = 8;

interface ExpiringRow {
  id: string;
  tenant_id: string;
  name: string;
  expiration_date: Date;
  last_used_at: Date | null;
}

const SELECT = "select id, tenant_id, name, expiration_date, last_used_at from api_tokens";

/** The latest 08:00 UTC at or before `now`: the daily run that last went through every key. */
function lastDailyRun(now: Date): Date {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS + DAILY_HOUR * HOUR_MS;
  return new Date(today <= now.getTime() ? today : today - DAY_MS);
}

/**
 * Hourly, so that an expiry issue turns critical within the hour the key stops working (once a
 * key has expired, its issue is critical), while raising and escalating stay daily:
 *
 * - The 08:00 UTC run (any run whose `now` falls in that hour, manual ones included) goes
 *   through every key expiring within 7 calendar days: it opens an `api_token_expiring` issue
 *   (warning), escalates it inside the key's last 24 hours (error), and marks it critical once
 *   the key has expired.
 * - Every other run only marks critical the issues of keys that expired since the last 08:00
 *   run (older ones that run already did), opening the issue if none was raised before.
 *
 * Raising is idempotent, so a later run finding the issue critical changes nothing and sends
 * nothing again. Deleting the key closes the issue.
 */
export function apiTokenExpiryJob(db: Db): Job {
  return {
    name: "api-token-expiry",
    description:
      "Hourly: marks critical the expiry issues of API keys that have expired; at 08:00 UTC also raises and escalates them",
    cron: "0 * * * *",
    async run(now) {
      const daily = now.getUTCHours() === DAILY_HOUR;
      const rows = daily
        ? await db.query<ExpiringRow>(
            `${SELECT} where expiration_date < $1 order by expiration_date`,
            // Counted in calendar days: on the 13th, a key expiring any time on the 20th is 7 days out.
            [new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS + (WARN_DAYS + 1) * DAY_MS)],
          )
        : await db.query<ExpiringRow>(
            `${SELECT} where expiration_date > $1 and expiration_date <= $2 order by expiration_date`,
            [lastDailyRun(now), now],
          );
      const summary = { daily, checked: rows.length, opened: 0, escalated: 0, unchanged: 0 };
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
