import { connect, type Socket } from "node:net";

/**
 * One raw HTTP/1.1 keep-alive connection, for what a client library hides: several requests
 * written on one connection (the next before the first is answered), and when the server
 * closes it.
 */
export class RawConnection {
  private received = "";
  /** Resolves when the server closed the connection. */
  readonly ended: Promise<void>;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      this.received += chunk;
    });
    this.ended = new Promise((resolve) => socket.once("close", () => resolve()));
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => resolve(new RawConnection(socket)));
      socket.once("error", reject);
    });
  }

  /** Writes one request; `body` is sent as JSON. */
  send(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): void {
    const payload = body === undefined ? "" : JSON.stringify(body);
    const lines = [`${method} ${path} HTTP/1.1`, "host: 127.0.0.1", "connection: keep-alive"];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    if (body !== undefined)
      lines.push("content-type: application/json", `content-length: ${Buffer.byteLength(payload)}`);
    this.socket.write(`${lines.join("\r\n")}\r\n\r\n${payload}`);
  }

  /** The status of every answer received so far, in order. */
  statuses(): number[] {
    // An answer starts right after the previous one's body, not on a line of its own.
    return [...this.received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  }

  /** Every value of a header across the answers received, in order. */
  header(name: string): string[] {
    return [...this.received.matchAll(new RegExp(`^${name}: (.*)\r$`, "gim"))].map((m) => String(m[1]));
  }

  destroy(): void {
    this.socket.destroy();
  }
}
