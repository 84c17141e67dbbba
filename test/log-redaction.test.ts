import { Writable } from "node:stream";
import Fastify, { type FastifyBaseLogger, type FastifyServerOptions } from "fastify";
import { describe, expect, it } from "vitest";
import { secretSafeLogger } from "../src/platform/log-redaction.js";

function capture(): { log: FastifyBaseLogger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  // The service's own logger is Fastify's pino, built from these options.
  const logger = secretSafeLogger({ stream } as FastifyServerOptions["logger"], "info");
  const { log } = Fastify({ logger });
  return {
    log,
    lines: () =>
      chunks
        .join("")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line)),
  };
}

describe("the service's logger", () => {
  it("logs an error under err with its type, message and stack, secrets redacted", () => {
    const { log, lines } = capture();
    log.error({ err: new Error("connect to https://user:hunter2secret@db.example failed") }, "failed");
    const [line] = lines();
    const err = line?.err as { type: string; message: string; stack: string };
    expect(err.type).toBe("Error");
    expect(err.message).toContain("failed");
    expect(err.message).not.toContain("hunter2secret");
    expect(err.stack).toContain("Error");
  });
});
