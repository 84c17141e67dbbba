import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { createServer } from "node:net";

// The service as `npm start` runs it (or a script, or npm itself), in a child process: for tests
// of the real entry points.

export interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | string | null>;
}

/**
 * What a PostgreSQL node refuses to start without (docs/operations.md): the same on every node.
 * Test values only.
 */
export const POSTGRES_NODE_SECRETS = {
  JWT_SECRET: "process-test-jwt-secret-0123456789abcdefghij",
  SECRETS_KEY: `t1:${Buffer.alloc(32, 7).toString("base64")}`,
} as const;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** `command args` as a child process, its stdout and stderr gathered as one text. */
export function run(command: string, args: string[], options: Omit<SpawnOptions, "stdio"> = {}): Started {
  // No child reaches the ECB: the exchange-rates job is off unless the test sets FX_RATES_URL.
  const env = options.env === undefined ? undefined : { FX_RATES_URL: "", ...options.env };
  const child = spawn(command, args, { ...options, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  // The exit code, or the signal's name when something killed the process.
  const exited = new Promise<number | string | null>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? signal)),
  );
  return { child, output: () => output, exited };
}

/** A TypeScript file of this checkout (src/main.ts, scripts/*.ts) run as npm runs it, through tsx. */
export function startScript(script: string, args: string[], env: Record<string, string>): Started {
  return run(process.execPath, ["--import", "tsx", script, ...args], {
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", ...env },
  });
}

export function start(args: string[], env: Record<string, string>): Started {
  return startScript("src/main.ts", args, env);
}

export async function waitFor(started: Started, text: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = started.output().match(text);
    if (match) return match;
    if (started.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`did not see ${text} in:\n${started.output()}`);
}
