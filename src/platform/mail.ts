import type { FastifyBaseLogger } from "fastify";
import nodemailer, { type Transporter } from "nodemailer";
import type { Clock } from "./clock.js";
import type { Db, Queryable } from "./db/index.js";
import {
  FairClaimer,
  type FairShare,
  type FairTable,
  fairDueIds,
  type InFlight,
  unlimitedShare,
} from "./fair-claimer.js";
import { newId } from "./ids.js";

export interface Mail {
  tenantId: string | null;
  to: string[];
  subject: string;
  body: string;
}

/** Channel on which senders hear that mail was queued. */
const MAIL_CHANNEL = "mail_outbox";

/** Writes a mail into the outbox inside the caller's transaction; the sender delivers it later. */
export async function queueMail(db: Queryable, mail: Mail, now: Date): Promise<void> {
  if (mail.to.length === 0) return;
  await db.query(
    `insert into mail_outbox (id, tenant_id, recipients, subject, body, next_attempt_at, created_at)
     values ($1, $2, $3, $4, $5, $6, $6)`,
    [newId("mail"), mail.tenantId, mail.to, mail.subject, mail.body, now],
  );
  // Wakes the senders once the caller's transaction commits, rather than at their next poll.
  await db.query("select pg_notify($1, '')", [MAIL_CHANNEL]);
}

interface OutboxRow {
  id: string;
  tenant_id: string | null;
  recipients: string[];
  subject: string;
  body: string;
  attempts: number;
}

const BATCH = 50;
const LEASE_MS = 60_000;
const MAX_ATTEMPTS = 5;
const POLL_MS = 2_000;
/** Mails the sender loop has under way at once (SMTP connections). */
export const MAIL_SLOTS = 8;
/** Of those, one tenant's: a tenant whose events raise hundreds of mails cannot hold the others' back. */
export const MAIL_SLOTS_PER_TENANT = 2;

/** The due mails, as the fair claim reads them: per tenant (system mails as one), all to one SMTP server. */
const DUE_MAILS: FairTable = {
  table: "mail_outbox",
  due: "status = 'pending' and next_attempt_at <= $1 and (locked_until is null or locked_until < $1)",
  tenant: "coalesce(tenant_id, '')",
  destination: "'smtp'",
  order: "next_attempt_at",
};

/**
 * Delivers the outbox: through SMTP when SMTP_URL is set, otherwise it logs each mail and
 * leaves it in the table marked `logged`. Rows are claimed with a lease (60 s) and SKIP LOCKED,
 * so several workers do not pick the same mail; a failure is retried with growing delays. The
 * worker's loop claims whenever one of its 8 slots is free (woken when mail is queued, or
 * every 2 s), each mail in a slot of its own, and no tenant has more than 2 under way, so one
 * tenant's flood of mail cannot hold back another's. A
 * send that outlives its lease can be repeated by the sender that takes the mail over (mail has
 * no idempotency key), but only the holder of the lease writes a result: the late one's is
 * dropped and logged, so it cannot turn a sent mail back into a pending one.
 */
export class MailSender {
  readonly #transport: Transporter | undefined;
  readonly #claimer: FairClaimer<OutboxRow>;
  #running: Promise<number> | undefined;
  #listening: Promise<() => Promise<void>> | undefined;

  constructor(
    private readonly deps: { db: Db; clock: Clock; log: FastifyBaseLogger; smtpUrl: string | undefined; from: string },
  ) {
    this.#transport = deps.smtpUrl ? nodemailer.createTransport(deps.smtpUrl) : undefined;
    // The worker's loop: claims whenever a slot is free, each mail in a slot of its own, no
    // tenant more than its share (docs/limits.md "Delivery fairness").
    this.#claimer = new FairClaimer<OutboxRow>({
      caps: {
        maxInFlight: MAIL_SLOTS,
        batch: MAIL_SLOTS,
        perTenant: MAIL_SLOTS_PER_TENANT,
        perDestination: MAIL_SLOTS,
      },
      idleMs: POLL_MS,
      keysOf: (row) => ({ tenant: row.tenant_id ?? "", destination: "smtp" }),
      claim: async (limit, share) => {
        const rows = await this.#claim(limit, share);
        return { claimed: rows.length, ready: rows };
      },
      run: (row) => this.#deliver(row),
      onError: (error) => this.deps.log.warn({ err: error }, "mail sending failed"),
    });
  }

  start(): void {
    this.#claimer.start();
    this.#listening ??= this.deps.db
      .listen(MAIL_CHANNEL, () => this.#claimer.wake())
      .catch((error: unknown) => {
        // The poll still finds the mail, a couple of seconds later.
        this.deps.log.warn({ err: error }, "listening for queued mail failed");
        return async () => undefined;
      });
  }

  /** Mails under way in the loop, per tenant. */
  get inFlight(): InFlight {
    return this.#claimer.inFlight;
  }

  async stop(): Promise<void> {
    const listening = this.#listening;
    this.#listening = undefined;
    await (await listening)?.().catch(() => undefined);
    await this.#claimer.stop();
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
      const rows = await this.#claim(BATCH, unlimitedShare(BATCH));
      if (rows.length === 0) return handled;
      for (const row of rows) await this.#deliver(row);
      handled += rows.length;
    }
  }

  /** Leases up to `limit` due mails in one statement, passing over tenants at their share. */
  #claim(limit: number, share: FairShare): Promise<OutboxRow[]> {
    const now = this.deps.clock.now();
    const params: unknown[] = [now, new Date(now.getTime() + LEASE_MS)];
    const ids = fairDueIds(DUE_MAILS, share, limit, params);
    return this.deps.db.query<OutboxRow>(
      `update mail_outbox set locked_until = $2, attempts = attempts + 1
        where id in (${ids})
        returning id, tenant_id, recipients, subject, body, attempts`,
      params,
    );
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
