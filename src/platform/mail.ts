import type { FastifyBaseLogger } from "fastify";
import nodemailer, { type Transporter } from "nodemailer";
import type { Clock } from "./clock.js";
import type { Db, Queryable } from "./db/index.js";
import { newId } from "./ids.js";

export interface Mail {
  tenantId: string | null;
  to: string[];
  subject: string;
  body: string;
}

/** Writes a mail into the outbox inside the caller's transaction; the sender delivers it later. */
export async function queueMail(db: Queryable, mail: Mail, now: Date): Promise<void> {
  if (mail.to.length === 0) return;
  await db.query(
    `insert into mail_outbox (id, tenant_id, recipients, subject, body, next_attempt_at, created_at)
     values ($1, $2, $3, $4, $5, $6, $6)`,
    [newId("mail"), mail.tenantId, mail.to, mail.subject, mail.body, now],
  );
}

interface OutboxRow {
  id: string;
  recipients: string[];
  subject: string;
  body: string;
  attempts: number;
}

const BATCH = 50;
const LEASE_MS = 60_000;
const MAX_ATTEMPTS = 5;
const POLL_MS = 2_000;

/**
 * Delivers the outbox: through SMTP when SMTP_URL is set, otherwise it logs each mail and
 * leaves it in the table marked `logged`. Rows are claimed with a lease and SKIP LOCKED, so
 * several workers never send one mail twice; a failure is retried with growing delays.
 */
export class MailSender {
  readonly #transport: Transporter | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<number> | undefined;

  constructor(
    private readonly deps: { db: Db; clock: Clock; log: FastifyBaseLogger; smtpUrl: string | undefined; from: string },
  ) {
    this.#transport = deps.smtpUrl ? nodemailer.createTransport(deps.smtpUrl) : undefined;
  }

  start(): void {
    this.#timer = setInterval(
      () => void this.flush().catch((error: unknown) => this.deps.log.warn({ err: error }, "mail flush failed")),
      POLL_MS,
    );
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
    this.#transport?.close();
  }

  /** Sends every due mail now; returns how many were handled. */
  flush(): Promise<number> {
    this.#running ??= this.#drain().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #drain(): Promise<number> {
    let handled = 0;
    for (;;) {
      const now = this.deps.clock.now();
      const rows = await this.deps.db.query<OutboxRow>(
        `update mail_outbox set locked_until = $2, attempts = attempts + 1
          where id in (select id from mail_outbox
                        where status = 'pending' and next_attempt_at <= $1 and (locked_until is null or locked_until < $1)
                        order by next_attempt_at limit $3 for update skip locked)
          returning id, recipients, subject, body, attempts`,
        [now, new Date(now.getTime() + LEASE_MS), BATCH],
      );
      if (rows.length === 0) return handled;
      for (const row of rows) await this.#deliver(row);
      handled += rows.length;
    }
  }

  async #deliver(row: OutboxRow): Promise<void> {
    const now = this.deps.clock.now();
    if (!this.#transport) {
      this.deps.log.info(
        { mailId: row.id, to: row.recipients, subject: row.subject, body: row.body },
        "mail (no SMTP_URL: kept in the outbox)",
      );
      await this.deps.db.query(
        "update mail_outbox set status = 'logged', sent_at = $2, locked_until = null where id = $1",
        [row.id, now],
      );
      return;
    }
    try {
      await this.#transport.sendMail({
        from: this.deps.from,
        to: row.recipients,
        subject: row.subject,
        text: row.body,
      });
      await this.deps.db.query(
        "update mail_outbox set status = 'sent', sent_at = $2, locked_until = null where id = $1",
        [row.id, now],
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const failed = row.attempts >= MAX_ATTEMPTS;
      this.deps.log.warn(
        { mailId: row.id, attempt: row.attempts, err: error },
        failed ? "mail failed for good" : "mail failed; will retry",
      );
      // 1, 4, 9, 16 minutes between attempts.
      await this.deps.db.query(
        `update mail_outbox set status = $2, last_error = $3, locked_until = null, next_attempt_at = $4 where id = $1`,
        [row.id, failed ? "failed" : "pending", message, new Date(now.getTime() + row.attempts ** 2 * 60_000)],
      );
    }
  }
}
