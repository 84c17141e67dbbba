import { Agent, type IncomingHttpHeaders, request } from "node:http";

/**
 * A client-side load balancer for the rolling-restart test: round robin over the nodes, each
 * with its own keep-alive connection pool (as a balancer keeps to its upstreams). A request
 * that got no answer at all because the node would not take it (connection refused, or the
 * connection closed before any byte of an answer: a draining node closes its idle keep-alive
 * connections and drops what waits in its accept queue) goes to the next node, as a balancer
 * retries. An answer, whatever its status, is returned as is: a 5xx is the caller's failure.
 */

export interface Outgoing {
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Index of the node that answered. */
  node: number;
}

/** The request reached no handler: safe to send elsewhere. */
class NotTaken extends Error {
  constructor(
    readonly code: string,
    readonly reused: boolean,
  ) {
    super(`not taken: ${code}`);
  }
}

const NOT_TAKEN = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE"]);

export class RoundRobin {
  /** Connections refused (a node not listening). */
  refused = 0;
  /** Reused keep-alive connections closed before any answer (a draining node closes its idle ones). */
  closedIdle = 0;
  /** New connections closed before any answer (dropped from a closing node's accept queue). */
  closedNew = 0;
  /** Answers per node. */
  readonly answered: number[];
  private next = 0;
  private readonly agents: Agent[];

  constructor(
    private readonly ports: readonly number[],
    maxSocketsPerNode = 16,
  ) {
    this.agents = ports.map(() => new Agent({ keepAlive: true, maxSockets: maxSocketsPerNode }));
    this.answered = ports.map(() => 0);
  }

  /** Sends to the next node in turn, moving on while nodes do not take it (for up to `giveUpMs`). */
  async send(outgoing: Outgoing, giveUpMs = 20_000): Promise<Answer> {
    const deadline = Date.now() + giveUpMs;
    let node = this.next++ % this.ports.length;
    for (let tries = 1; ; tries++) {
      try {
        const answer = await this.once(node, outgoing);
        this.answered[node] = (this.answered[node] ?? 0) + 1;
        return answer;
      } catch (error) {
        if (!(error instanceof NotTaken)) throw error;
        if (error.code === "ECONNREFUSED") this.refused += 1;
        else if (error.reused) this.closedIdle += 1;
        else this.closedNew += 1;
        if (Date.now() > deadline) throw new Error(`no node took ${outgoing.method} ${outgoing.path}: ${error.code}`);
        // Every node refused in this round: wait a little before the next.
        if (tries % this.ports.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
        node = (node + 1) % this.ports.length;
      }
    }
  }

  private once(node: number, outgoing: Outgoing): Promise<Answer> {
    return new Promise((resolve, reject) => {
      let answering = false;
      const req = request(
        {
          host: "127.0.0.1",
          port: this.ports[node],
          method: outgoing.method,
          path: outgoing.path,
          headers: {
            ...outgoing.headers,
            ...(outgoing.body === undefined ? {} : { "content-length": String(Buffer.byteLength(outgoing.body)) }),
          },
          agent: this.agents[node],
        },
        (res) => {
          answering = true;
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString(),
              node,
            }),
          );
          res.on("error", reject);
        },
      );
      req.on("error", (error: NodeJS.ErrnoException) => {
        // Once an answer began, losing the rest is a failure, not something to send again.
        if (!answering && NOT_TAKEN.has(error.code ?? "")) reject(new NotTaken(error.code ?? "", req.reusedSocket));
        else reject(error);
      });
      req.end(outgoing.body);
    });
  }

  close(): void {
    for (const agent of this.agents) agent.destroy();
  }
}
