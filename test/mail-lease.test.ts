import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import Fastify, { type FastifyBaseLogger } from "fastify";
import { SMTPServer } from "smtp-server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../src/platform/clock.js";
import type { Db } from "../src/platform/db/index.js";
import { MailSender, queueMail } from "../src/platform/mail.js";
import { openTestDb, type TestDb } from "./helpers/db.js";

// Two senders on one database; the first one's SMTP server stalls until its 60 s lease has
// expired, the second takes the mail over and sends it. The first one's late result must not
// be written over the second's.

interface GatedSmtp {
  url: string;
  /** Messages accepted, in order of acceptance. */
  accepted: string[];
  /** Resolves once the first message's DATA has arrived (the first send is mid-flight). */
  firstArrived: Promise<void>;
  /** Lets the first message finish: accepted, or refused with a 4xx/5xx. */
  release(outcome: "accept" | "refuse"): void;
  close(): Promise<void>;
}

/** A real SMTP server on loopback that holds the first message until told what to do with it. */
async function startGatedSmtp(): Promise<GatedSmtp> {
  const accepted: string[] = [];
  let arrived: () => void = () => undefined;
  const firstArrived = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  let release: (outcome: "accept" | "refuse") => void = () => undefined;
  const gate = new Promise<"accept" | "refuse">((resolve) => {
    release = resolve;
  });
  let seen = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, _session, callback) {
      seen += 1;
      const first = seen === 1;
      let raw = "";
      stream.on("data", (chunk: Buffer) => {
        raw += chunk.toString();
      });
      stream.on("end", () => {
        if (!first) {
          accepted.push(raw);
          callback();
          return;
        }
        arrived();
        void gate.then((outcome) => {
          if (outcome === "accept") {
            accepted.push(raw);
            callback();
          } else callback(Object.assign(new Error("mailbox busy"), { responseCode: 451 }));
        });
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    accepted,
    firstArrived,
    release: (outcome) => release(outcome),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function recordingLogger(): { log: FastifyBaseLogger; lines: () => { msg: string; mailId?: string }[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const log = Fastify({ logger: { level: "warn", stream } }).log;
  return { log, lines: () => lines.map((l) => JSON.parse(l) as { msg: string; mailId?: string }) };
}

interface OutboxRow {
  id: string;
  status: string;
  attempts: number;
  sent_at: Date | null;
  last_error: string | null;
  locked_until: Date | null;
}

describe("the mail lease", () => {
  let testDb: TestDb;
  let smtp: GatedSmtp;
  let other: Db | undefined;

  beforeEach(async () => {
    testDb = await openTestDb();
    smtp = await startGatedSmtp();
  });
  afterEach(async () => {
    smtp.release("accept");
    await smtp.close();
    await testDb.dispose();
  });

  /** Two senders as on two nodes: on PostgreSQL each with its own pool. */
  function senders(clock: ManualClock) {
    other = testDb.kind === "postgres" ? testDb.openAnother() : testDb.db;
    const first = recordingLogger();
    const second = recordingLogger();
    const from = "Tracking Platform <no-reply@localhost>";
    return {
      a: new MailSender({ db: testDb.db, clock, log: first.log, smtpUrl: smtp.url, from }),
      b: new MailSender({ db: other, clock, log: second.log, smtpUrl: smtp.url, from }),
      aLines: first.lines,
    };
  }

  async function outbox(): Promise<OutboxRow> {
    const [row] = await testDb.db.query<OutboxRow>(
      "select id, status, attempts, sent_at, last_error, locked_until from mail_outbox",
    );
    if (!row) throw new Error("no mail");
    return row;
  }

  it.each([
    ["fails", "refuse"],
    ["succeeds", "accept"],
  ] as const)(
    "a send that %s after its lease expired does not overwrite the new holder's result",
    async (_what, outcome) => {
      const clock = new ManualClock("2026-03-02T10:00:00Z");
      const { a, b, aLines } = senders(clock);
      try {
        await queueMail(
          testDb.db,
          { tenantId: null, to: ["ops@example.com"], subject: "Hello", body: "Body" },
          clock.now(),
        );
        const first = a.flush();
        await smtp.firstArrived;
        const held = await outbox();
        expect(held).toMatchObject({ status: "pending", attempts: 1 });

        // The first sender is stuck in its send past the 60 s lease: the second takes the mail.
        clock.advance(61_000);
        const takeoverAt = clock.now();
        expect(await b.flush()).toBe(1);
        const taken = await outbox();
        expect(taken).toMatchObject({ status: "sent", attempts: 2 });
        expect(taken.sent_at?.toISOString()).toBe(takeoverAt.toISOString());

        smtp.release(outcome);
        expect(await first).toBe(1);
        // The late result is not written: still the second sender's.
        const after = await outbox();
        expect(after).toMatchObject({ status: "sent", attempts: 2, last_error: null, locked_until: null });
        expect(after.sent_at?.toISOString()).toBe(takeoverAt.toISOString());
        expect(aLines().some((l) => l.msg.includes("lease lost during the send") && l.mailId === after.id)).toBe(true);

        // And nothing is sent again later.
        clock.advance(3_600_000);
        expect(await a.flush()).toBe(0);
        expect(await b.flush()).toBe(0);
        expect(smtp.accepted).toHaveLength(outcome === "accept" ? 2 : 1);
      } finally {
        await a.stop();
        await b.stop();
      }
    },
    30_000,
  );

  it("a sender whose lease was taken over does not send the mail at all", async () => {
    const clock = new ManualClock("2026-03-02T10:00:00Z");
    const { a, b, aLines } = senders(clock);
    try {
      await queueMail(testDb.db, { tenantId: null, to: ["one@example.com"], subject: "One", body: "1" }, clock.now());
      await queueMail(
        testDb.db,
        { tenantId: null, to: ["two@example.com"], subject: "Two", body: "2" },
        new Date(clock.now().getTime() + 1),
      );
      clock.advance(1);
      // A claims both; its first send stalls past the lease; B takes both over and sends them.
      const first = a.flush();
      await smtp.firstArrived;
      clock.advance(61_000);
      expect(await b.flush()).toBe(2);
      smtp.release("refuse");
      await first;
      const rows = await testDb.db.query<{ subject: string; status: string; attempts: number }>(
        "select subject, status, attempts from mail_outbox order by subject",
      );
      expect(rows).toEqual([
        { subject: "One", status: "sent", attempts: 2 },
        { subject: "Two", status: "sent", attempts: 2 },
      ]);
      // "Two" was sent once, by B: A saw its lease gone and did not send it.
      expect(smtp.accepted.filter((raw) => raw.includes("Subject: Two"))).toHaveLength(1);
      expect(aLines().some((l) => l.msg.includes("lease lost before sending"))).toBe(true);
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 30_000);
});
