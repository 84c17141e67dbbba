import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * A real webhook receiver on loopback (tests talk to real HTTP, never a mocked sender): records
 * every request it gets and answers each path as scripted: a status (2xx, 5xx, 302...), a hang
 * past any timeout, or a reset connection. Unscripted paths answer 200.
 */

export interface Received {
  method: string;
  /** Path and query exactly as sent. */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Answer =
  | { status: number; body?: string; headers?: Record<string, string> }
  /** Never answers: the sender must give up on its own timeout. */
  | "hang"
  /** Destroys the socket once the request is read. */
  | "reset"
  /** Answers 200 at once, then sends its body a byte at a time every 50 ms, never ending it. */
  | "trickle";

export interface Receiver {
  /** `http://127.0.0.1:<port>` (or https). */
  readonly base: string;
  readonly port: number;
  readonly requests: Received[];
  /** Connections opened to it, whether or not a request followed (a refused TLS handshake sends none). */
  readonly connections: number;
  /** Scripts a path: a single answer for every request, or one answer per request in turn (the last repeats). */
  on(path: string, answer: Answer | Answer[]): void;
  /** Requests whose path is `path`. */
  at(path: string): Received[];
  /** Resolves with the first request to `path`, or rejects after `timeoutMs`. */
  waitFor(path: string, timeoutMs: number): Promise<Received>;
  close(): Promise<void>;
}

const execFileAsync = promisify(execFile);

/** A throwaway self-signed certificate for CN=localhost, made with openssl at test time. */
export async function selfSignedCertificate(): Promise<{ key: Buffer; cert: Buffer }> {
  const dir = await mkdtemp(join(tmpdir(), "receiver-tls-"));
  try {
    const keyPath = join(dir, "key.pem");
    const certPath = join(dir, "cert.pem");
    await execFileAsync("openssl", [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      "/CN=localhost",
      "-days",
      "1",
      "-keyout",
      keyPath,
      "-out",
      certPath,
    ]);
    return { key: await readFile(keyPath), cert: await readFile(certPath) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function startReceiver(options: { tls?: { key: Buffer; cert: Buffer } } = {}): Promise<Receiver> {
  const requests: Received[] = [];
  let connections = 0;
  const scripts = new Map<string, Answer[]>();
  const served = new Map<string, number>();
  const sockets = new Set<Socket>();
  const waiters: { path: string; resolve: (r: Received) => void }[] = [];

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = req.url ?? "/";
      const parsed = new URL(url, "http://receiver");
      const received: Received = {
        method: req.method ?? "",
        url,
        path: parsed.pathname,
        query: parsed.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(received);
      for (const waiter of waiters.filter((w) => w.path === received.path)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(received);
      }
      const script = scripts.get(received.path);
      const count = served.get(received.path) ?? 0;
      served.set(received.path, count + 1);
      const answer: Answer = script?.[Math.min(count, script.length - 1)] ?? { status: 200, body: "ok" };
      if (answer === "hang") return;
      if (answer === "reset") {
        req.socket.destroy();
        return;
      }
      if (answer === "trickle") {
        res.writeHead(200, { "content-type": "text/plain" });
        const timer = setInterval(() => res.write("."), 50);
        res.on("close", () => clearInterval(timer));
        return;
      }
      res.writeHead(answer.status, { "content-type": "text/plain", ...answer.headers });
      res.end(answer.body ?? "");
    });
  };

  const server: Server = options.tls ? createHttpsServer(options.tls, handle) : createServer(handle);
  server.on("connection", (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    base: `${options.tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    requests,
    get connections() {
      return connections;
    },
    on(path, answer) {
      scripts.set(path, Array.isArray(answer) ? answer : [answer]);
    },
    at(path) {
      return requests.filter((r) => r.path === path);
    },
    waitFor(path, timeoutMs) {
      const seen = requests.find((r) => r.path === path);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no request to ${path} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          path,
          resolve: (r) => {
            clearTimeout(timer);
            resolve(r);
          },
        });
      });
    },
    async close() {
      // Hanging requests hold their sockets open: drop them so close() returns.
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
