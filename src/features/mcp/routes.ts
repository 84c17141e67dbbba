import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { FastifyInstance, FastifyReply } from "fastify";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { ApiError } from "../../platform/http/errors.js";
import { limitText } from "../../platform/http/rate-limit.js";
import { authenticate, isRefusedCredential, type Principal } from "../auth/index.js";
import { ReportsBusy } from "../reports/index.js";
import { meterRequest } from "../usage/index.js";
import { MCP_PATH, MCP_SCOPES } from "./access.js";
import { reportsServer } from "./tools.js";

/** Only an ApiKey whose scopes hold reports.read or reports.update; legacy keys are refused. */
function requireReportsKey(principal: Principal): Extract<Principal, { kind: "apiKey" }> {
  // A person's session is a known caller without the right to this endpoint: 403, as an API key
  // is on the endpoints tied to a person (`GET /api/v1/me`).
  if (principal.kind !== "apiKey") {
    throw ApiError.forbidden("The MCP endpoint takes an API key: send 'Authorization: ApiKey <key>'");
  }
  if (principal.legacy) {
    throw ApiError.forbidden(
      "Legacy API keys (created without scopes) cannot use MCP; create a key with the reports.read scope",
    );
  }
  if (!principal.scopes.some((s) => (MCP_SCOPES as readonly string[]).includes(s))) {
    throw ApiError.forbidden("This API key needs the reports.read or reports.update scope to use MCP");
  }
  return principal;
}

// Server-defined JSON-RPC codes (-32000 to -32099) for the HTTP refusals.
const JSON_RPC_CODES: Record<number, number> = { 401: -32001, 403: -32003, 405: -32005, 429: -32029 };

function jsonRpcError(reply: FastifyReply, status: number, message: string) {
  return reply
    .status(status)
    .header("content-type", "application/json")
    .send({ jsonrpc: "2.0", error: { code: JSON_RPC_CODES[status] ?? -32000, message }, id: null });
}

/** Calls in one POST: a JSON-RPC batch spends one request of the key's budget per message. */
function callsIn(body: unknown): number {
  return Array.isArray(body) ? Math.max(1, body.length) : 1;
}

/** Whether a POST calls run_report: then it takes a slot of the tenant's share of report work. */
function runsReports(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    if (typeof message !== "object" || message === null) return false;
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } | null };
    return method === "tools/call" && typeof params === "object" && params?.name === "run_report";
  });
}

// Untyped: a JSON-RPC batch is an array, and the transport (after the key is checked) judges it.
const JsonRpc = Type.Unsafe<unknown>({ description: "A JSON-RPC message or batch (MCP)" });

/** What this route uses of the app's shared parts (assembled in app.ts): the authenticator's among them. */
export type McpRouteDeps = Pick<
  AppContext,
  "db" | "clock" | "config" | "build" | "usage" | "lastUsed" | "apiKeys" | "people" | "reports"
>;

/** POST /mcp: the MCP streamable HTTP endpoint (stateless: one server per request). */
export function mcpRoutes(ctx: McpRouteDeps) {
  return async (app: FastifyInstance) => {
    app.post(
      MCP_PATH,
      {
        schema: {
          tags: ["MCP"],
          summary: "MCP (streamable HTTP): tools list_reports, describe_report, run_report",
          description:
            "Authorization: ApiKey <key> with the reports.read or reports.update scope; legacy keys are refused.",
          body: JsonRpc,
          response: { 200: JsonRpc, 401: JsonRpc, 403: JsonRpc, 429: JsonRpc },
        },
      },
      async (request, reply) => {
        let tenantId: string;
        let tokenId: string;
        // An address past its refused credentials is refused before the key is looked up.
        const overBudget = app.limits.credentialBudget(request.ip);
        if (overBudget !== null) {
          reply.header("retry-after", overBudget.retryAfterS);
          return jsonRpcError(
            reply,
            429,
            `Too many refused credentials from this address: ${limitText(overBudget)}; retry later`,
          );
        }
        try {
          const principal = await authenticate(ctx, request.headers.authorization);
          const key = requireReportsKey(principal);
          tenantId = key.tenantId;
          tokenId = key.tokenId;
          ctx.lastUsed.touch(tokenId, request.ip, ctx.clock.now());
          // Metered like the key's /api/v1 calls (a 429 included); the reply is hijacked below,
          // so no onResponse hook runs: the call is metered once it is sent.
          request.principal = principal;
          // Each message of a batch is metered as the request it stands for.
          const calls = callsIn(request.body);
          // Once: light-my-request's response (tests) emits "finish" twice.
          reply.raw.once("finish", () => {
            for (let i = 0; i < calls; i++) meterRequest(ctx.usage, request, reply.raw.statusCode, ctx.clock.now());
          });
        } catch (error) {
          if (isRefusedCredential(error, request.headers.authorization)) await app.limits.credentialFailed(request.ip);
          if (error instanceof ApiError) return jsonRpcError(reply, error.status, error.message);
          throw error;
        }
        // The key's budget is the one its /api/v1 calls spend: MCP is no way around the limit.
        const budget = await app.limits.takeApiKey(tokenId, callsIn(request.body));
        if (!budget.allowed) {
          reply.header("retry-after", budget.retryAfterS);
          return jsonRpcError(reply, 429, `Too many requests: ${limitText(budget)}; retry later`);
        }
        // A post that runs reports takes one slot of the tenant's share for all its calls (they
        // run one after another), or waits in the tenant's queue, or is refused here: a 429 with
        // Retry-After, as on the report routes, before any query.
        let release: (() => void) | undefined;
        if (runsReports(request.body)) {
          // A caller that leaves while its post waits in the queue gives its slot back at once.
          let left = false;
          const onLeave = () => {
            left = true;
          };
          reply.raw.once("close", onLeave);
          try {
            release = await ctx.reports.enter(tenantId);
          } catch (error) {
            if (!(error instanceof ReportsBusy)) throw error;
            reply.header("retry-after", error.retryAfterS);
            return jsonRpcError(reply, 429, error.message);
          } finally {
            reply.raw.removeListener("close", onLeave);
          }
          if (left || reply.raw.destroyed) {
            release();
            return reply.hijack();
          }
        }
        const { server, drained } = reportsServer({
          db: ctx.db,
          tenantId,
          now: () => ctx.clock.now(),
          maxWindowDays: ctx.config.reportMaxWindowDays,
          version: ctx.build.version,
          inShare: release ? (run) => run() : (run) => ctx.reports.run(tenantId, run),
          // The caller sees a generic message; the operator sees the cause.
          log: (error) => request.log.error({ err: error }, "MCP tool failed"),
        });
        const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
        reply.hijack();
        reply.raw.on("close", () => {
          void transport.close();
          void server.close();
          // The slot is given back once the calls under way have ended, even if the caller left.
          if (release) void drained().finally(release);
        });
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      },
    );

    // Stateless: no server-sent event stream to open and no session to end.
    const notAllowed = (_request: unknown, reply: FastifyReply) =>
      jsonRpcError(reply.header("allow", "POST"), 405, "Method not allowed: this MCP endpoint is stateless; use POST");
    app.get(MCP_PATH, { schema: { hide: true } }, notAllowed);
    app.delete(MCP_PATH, { schema: { hide: true } }, notAllowed);
  };
}
