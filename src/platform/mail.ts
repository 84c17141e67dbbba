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
 * leaves it in the table marked `logged`. Rows are claimed with a lease (60 s) and SKIP LOCKED,
 * so several workers do not pick the same mail; a failure is retried with growing delays. A
 * send that outlives its lease can be repeated by the sender that takes the mail over (mail has
 * no idempotency key), but only the holder of the lease writes a result: the late one's is
 * dropped and logged, so it cannot turn a sent mail back into a pending one.
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

  /**
   * The lease is fenced by `attempts`: every claim increments it, so `attempts = row.attempts`
   * (still pending) holds only while no other sender has claimed the mail since. Each write
   * below is conditional on it, and a mail whose lease is gone is neither sent nor written.
   */
  async #stillOurs(row: OutboxRow, set: string, params: unknown[]): Promise<boolean> {
    const done = await this.deps.db.query(
      `update mail_outbox set ${set} where id = $1 and attempts = $2 and status = 'pending' returning id`,
      [row.id, row.attempts, ...params],
    );
    return done.length > 0;
  }

  async #deliver(row: OutboxRow): Promise<void> {
    // Renewed just before sending: the rows of one claim are sent one after the other, and a
    // late one must not go out after another sender took it over.
    const renewed = new Date(this.deps.clock.now().getTime() + LEASE_MS);
    if (!(await this.#stillOurs(row, "locked_until = $3", [renewed]))) {
      this.deps.log.warn(
        { mailId: row.id, attempt: row.attempts },
        "mail lease lost before sending; left to its new holder",
      );
      return;
    }
    const now = this.deps.clock.now();
    if (!this.#transport) {
      this.deps.log.info(
        { mailId: row.id, to: row.recipients, subject: row.subject, body: row.body },
        "mail (no SMTP_URL: kept in the outbox)",
      );
      await this.#record(row, "status = 'logged', sent_at = $3, locked_until = null", [now], "logged");
      return;
    }
    try {
      await this.#transport.sendMail({
        from: this.deps.from,
        to: row.recipients,
        subject: row.subject,
        text: row.body,
      });
      await this.#record(row, "status = 'sent', sent_at = $3, locked_until = null", [now], "sent");
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const failed = row.attempts >= MAX_ATTEMPTS;
      this.deps.log.warn(
        { mailId: row.id, attempt: row.attempts, err: error },
        failed ? "mail failed for good" : "mail failed; will retry",
      );
      // 1, 4, 9, 16 minutes between attempts.
      await this.#record(
        row,
        "status = $3, last_error = $4, locked_until = null, next_attempt_at = $5",
        [failed ? "failed" : "pending", message, new Date(now.getTime() + row.attempts ** 2 * 60_000)],
        failed ? "failed" : "retry",
      );
    }
  }

  /** Writes a send's result if the lease is still ours; otherwise says so and writes nothing. */
  async #record(row: OutboxRow, set: string, params: unknown[], result: string): Promise<void> {
    if (await this.#stillOurs(row, set, params)) return;
    // The send outlived the lease and another sender claimed the mail: its result stands.
    this.deps.log.warn(
      { mailId: row.id, attempt: row.attempts, result },
      "mail lease lost during the send: result not written (another sender holds the mail)",
    );
  }
}
