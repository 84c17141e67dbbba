import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

// One bash session that runs a document's shell blocks in order, as a reader pasting them into
// one terminal would: variables and functions carry from block to block. The session has its
// own process group, so that everything the blocks start in the background (the service, a
// receiver) is stopped with it.

/** The ```sh blocks of a Markdown text, in order; other fence languages are left out. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? "");
}

/** The blocks of another fence language (e.g. `json`), for checks that do not run them. */
export function fencedBlocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm"))].map((m) => m[1] ?? "");
}

const DONE = "@@walkthrough-block-done";

export class ShellSession {
  private readonly child: ChildProcessWithoutNullStreams;
  private output = "";
  private readonly exited: Promise<number | string | null>;
  private count = 0;

  constructor(
    private readonly scratch: string,
    options: { cwd: string; env: Record<string, string> },
  ) {
    // -e and pipefail: a failing command anywhere in a block ends the session (stricter than a
    // reader's terminal), so a block cannot pass on the strength of its last line alone.
    this.child = spawn("bash", ["--noprofile", "--norc", "-e", "-o", "pipefail", "-s"], {
      cwd: options.cwd,
      // The service it starts never reaches the ECB (the exchange-rates job off).
      env: { FX_RATES_URL: "", ...options.env },
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const collect = (chunk: Buffer) => {
      this.output += chunk.toString();
    };
    this.child.stdout.on("data", collect);
    this.child.stderr.on("data", collect);
    this.exited = new Promise((resolve) => this.child.on("exit", (code, signal) => resolve(code ?? signal)));
  }

  /** Everything the session printed so far (stdout and stderr). */
  all(): string {
    return this.output;
  }

  /** Runs one block; answers what it printed. Throws with the output when it fails or hangs. */
  async run(block: string, timeoutMs: number): Promise<string> {
    const index = this.count++;
    const file = join(this.scratch, `block-${index}.sh`);
    await writeFile(file, block);
    const start = this.output.length;
    const marker = `${DONE} ${index}`;
    this.child.stdin.write(`source '${file}'\necho '${marker}'\n`);
    const deadline = Date.now() + timeoutMs;
    let exitCode: number | string | null | undefined;
    void this.exited.then((code) => {
      exitCode = code;
    });
    while (Date.now() < deadline) {
      const at = this.output.indexOf(marker, start);
      if (at >= 0) return this.output.slice(start, at);
      if (exitCode !== undefined) {
        throw new Error(
          `block ${index} failed (shell exit ${exitCode}):\n${block}\n--- output:\n${this.output.slice(start)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(
      `block ${index} did not finish in ${timeoutMs} ms:\n${block}\n--- output:\n${this.output.slice(start)}`,
    );
  }

  /** Stops the session and whatever its blocks left running: SIGTERM, then SIGKILL. */
  async close(): Promise<void> {
    const group = this.child.pid;
    if (group === undefined) return;
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-group, name);
      } catch {
        // The group is already gone.
      }
    };
    this.child.stdin.end();
    signal("SIGTERM");
    await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    // Background processes may outlive the shell; a short grace for their own shutdown.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    signal("SIGKILL");
  }
}
