import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The loopback receiver of the benchmark: answers every request 200 at once and notes when each
 * conversion id (the `c` query parameter) first arrived.
 */
export class BenchReceiver {
  readonly firstSeen = new Map<string, number>();
  requests = 0;
  private server: Server | null = null;

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      this.requests += 1;
      const id = new URL(request.url ?? "/", "http://x").searchParams.get("c");
      if (id !== null && !this.firstSeen.has(id)) this.firstSeen.set(id, performance.timeOrigin + performance.now());
      request.resume();
      request.on("end", () => {
        response.writeHead(200, { "content-type": "text/plain" });
        response.end("ok");
      });
    });
    this.server.keepAliveTimeout = 5000;
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
