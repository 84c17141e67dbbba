import { type Started, start, waitFor } from "./process.js";

/**
 * One node of the rolling-restart test: `src/main.ts` in a child process with one role, which
 * can be stopped with SIGTERM and started again on the same port.
 */
export class RollingNode {
  private current: Started | null = null;

  constructor(
    readonly name: string,
    private readonly role: "api" | "worker",
    private readonly env: Record<string, string>,
    /** The listen port (api nodes). */
    readonly port?: number,
  ) {}

  /** Starts the process and waits until it serves (api: `/api/health` answers 200). */
  async start(timeoutMs = 60_000): Promise<void> {
    const started = start(["--role", this.role], {
      ...this.env,
      ...(this.port === undefined ? {} : { PORT: String(this.port) }),
    });
    this.current = started;
    await waitFor(started, new RegExp(`running roles: ${this.role} on PostgreSQL`), timeoutMs);
    if (this.port === undefined) return;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${this.port}/api/health`)
        .then((res) => res.status)
        .catch(() => 0);
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`${this.name} not healthy (last ${status}):\n${started.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** SIGTERM, then waits for the exit; returns the exit code (or signal) and how long stopping took. */
  async stop(): Promise<{ exit: number | string | null; ms: number; output: string }> {
    const started = this.current;
    if (!started) throw new Error(`${this.name} is not running`);
    const begun = Date.now();
    started.child.kill("SIGTERM");
    const exit = await started.exited;
    this.current = null;
    return { exit, ms: Date.now() - begun, output: started.output() };
  }

  /** Ends the process at once if it still runs (cleanup after a failed test). */
  async kill(): Promise<void> {
    const started = this.current;
    this.current = null;
    if (!started || started.child.exitCode !== null || started.child.signalCode !== null) return;
    started.child.kill("SIGKILL");
    await started.exited;
  }
}
