import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createPostgresSchema, postgresUrl } from "./helpers/db.js";
import { freePort, POSTGRES_NODE_SECRETS } from "./helpers/process.js";
import { fencedBlocks, ShellSession, shellBlocks } from "./helpers/walkthrough-shell.js";

// docs/walkthrough.md as a reader runs it: every ```sh block, unchanged and in order, in one
// bash session from the checkout's root, against the real `npm start` on a fresh data
// directory (PGlite) or a fresh schema (PostgreSQL). If the service changes under the page,
// this fails, so the page cannot rot.

const root = join(import.meta.dirname, "..");
const onPglite = inject("dbKind") === "pglite";

/** True once nothing answers on the port any more (connection refused), false at the deadline. */
async function portCloses(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await fetch(`http://127.0.0.1:${port}/api/health`, { signal: AbortSignal.timeout(2_000) });
    } catch (error) {
      // A request that hangs (the service draining) is not a closed port.
      const code = (error as { cause?: { code?: string } }).cause?.code;
      if (code === "ECONNREFUSED") return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

describe("docs/walkthrough.md", () => {
  let markdown: string;
  let scratch: string;

  beforeAll(async () => {
    markdown = await readFile(join(root, "docs/walkthrough.md"), "utf8");
    scratch = await mkdtemp(join(tmpdir(), "tp-walkthrough-"));
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it("keeps its client configuration snippets valid JSON", () => {
    const snippets = fencedBlocks(markdown, "json");
    expect(snippets.length).toBeGreaterThanOrEqual(2);
    for (const snippet of snippets) {
      const parsed = JSON.parse(snippet) as { mcpServers?: Record<string, unknown> };
      expect(Object.keys(parsed.mcpServers ?? {})).toEqual(["tracking"]);
    }
    // The `claude mcp add` line (not run: it needs Claude Code) names the same endpoint and header.
    expect(markdown).toMatch(
      /claude mcp add --transport http tracking http:\/\/localhost:3000\/mcp --header "Authorization: ApiKey /,
    );
  });

  it("names only npm scripts that exist", async () => {
    const { scripts } = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    const named = [...markdown.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1] ?? "");
    expect(named.length).toBeGreaterThan(0);
    for (const name of named) expect(Object.keys(scripts), `npm run ${name}`).toContain(name);
  });

  it("runs every shell block in order against the real service", async () => {
    const blocks = shellBlocks(markdown);
    // Each block starts with a `# <step>` comment: the assertions below find blocks by it.
    const steps = blocks.map((block) => block.match(/^# (.+)$/m)?.[1] ?? "");
    expect(steps).toEqual([
      "1. start",
      "2. sign in, create a key",
      "3. create a link",
      "4. click",
      "5. postback",
      "5. API",
      "6. report",
      "7. receiver",
      "7. webhook",
      "8. MCP",
      "9. stop",
    ]);

    const port = await freePort();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? scratch,
      TMPDIR: scratch, // the page's `mktemp -d` lands here and is removed with it
      PORT: String(port),
      RECEIVER_PORT: String(await freePort()),
      HOST: "127.0.0.1",
      DATA_DIR: join(scratch, "data"),
    };
    let dropSchema: (() => Promise<void>) | undefined;
    if (!onPglite) {
      const { schema, drop } = await createPostgresSchema();
      dropSchema = drop;
      const url = new URL(postgresUrl());
      url.searchParams.set("options", `-c search_path=${schema},public`);
      env.DATABASE_URL = url.toString();
      Object.assign(env, POSTGRES_NODE_SECRETS);
      env.SEED_DEMO = "true"; // off by default with DATABASE_URL; the page starts from the demo
    }

    const shell = new ShellSession(scratch, { cwd: root, env });
    const out: Record<string, string> = {};
    let stopped = false;
    try {
      for (const [i, block] of blocks.entries()) {
        const step = steps[i] ?? "";
        // The first start seeds 20,000 demo clicks: the slow step on a busy machine.
        out[step] = await shell.run(block, step === "1. start" ? 90_000 : 30_000);
      }
      // Step 9 stopped the service (`kill` on what `npm start` started): its port closes, while
      // the session, which would stop anything left over, is still open.
      stopped = await portCloses(port, 20_000);
    } finally {
      await shell.close();
      await dropSchema?.();
    }

    expect(out["1. start"]).toMatch(/Demo login: +demo@example\.com \/ \S+/);
    expect(out["2. sign in, create a key"]).toContain('"name":"Walkthrough"');

    expect(out["3. create a link"]).toMatch(
      new RegExp(`tracking link: http://localhost:${port}/go/\\d+/\\d+\\?tracker=november`),
    );
    const click = out["4. click"]?.match(/click id: (clk_\w+)/)?.[1];
    expect(out["4. click"]).toMatch(/^HTTP\/1\.1 302/);
    expect(click).toBeDefined();

    // Both postbacks and the API conversion are recorded on the click.
    const postbacks = out["5. postback"] ?? "";
    expect(postbacks.match(/"attributed":true/g)).toHaveLength(2);
    expect(out["5. API"]).toContain(`"clickId":"${click}"`);
    expect(out["5. API"]).toContain('"attributed":true');

    // The report holds exactly this walkthrough's click and conversions.
    const report = out["6. report"] ?? "";
    expect(report).toContain('"link":"Walkthrough Link"');
    expect(report).toContain('"tracker":"november"');
    expect(report).toMatch(/"clicks":1,"signups":1,"deposits":2,"depositAmount":75.5\}/);
    expect(report).toContain(
      '"meta":{"timeZone":"UTC","currency":"EUR","status":["pending","approved"],"unconverted":[]}',
    );

    // The receiver got the postback, filled in, and the delivery log shows its answer.
    const webhook = out["7. webhook"] ?? "";
    expect(webhook).toContain(`GET /postback?click=${click}&type=Deposit&value=20&currency=EUR`);
    expect(webhook).toContain('"status":"Delivered"');
    expect(webhook).toMatch(/"response":\{"status":200,/);

    const mcp = out["8. MCP"] ?? "";
    expect(mcp).toContain('"name":"run_report"');
    expect(mcp).toMatch(/"structuredContent":\{"report":"performance","data":\[\{"link":"Walkthrough Link"/);
    expect(mcp).toContain('"clicks":1,"deposits":3,"depositAmount":95.5');

    expect(stopped, "the service still answers after step 9's kill").toBe(true);
  }, 180_000);
});
