import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { Envelope, errorResponses, ok } from "../../platform/http/envelope.js";
import { MCP_PATH, MCP_SCOPES } from "./access.js";
import { TOOLS } from "./tools.js";

const McpConnection = Type.Object({
  path: Type.String({ description: "The MCP endpoint's path on this service's origin (Streamable HTTP)" }),
  authorization: Type.String({ description: "The Authorization header the endpoint takes, with the key's place" }),
  scopes: Type.Array(Type.String(), { description: "An API key with any one of these scopes may use the endpoint" }),
  tools: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
});

/**
 * GET /mcp: how to connect an MCP client, from the MCP feature's own table of tools and scopes,
 * so the dashboard's MCP page cannot drift from what the endpoint accepts.
 */
export function mcpConnectionRoutes(): FastifyPluginAsyncTypebox {
  const connection = {
    path: MCP_PATH,
    authorization: "ApiKey <key>",
    scopes: [...MCP_SCOPES],
    tools: TOOLS.map(({ name, description }) => ({ name, description })),
  };
  return async (app) => {
    app.get(
      "/mcp",
      {
        config: { permission: "reports.read" },
        schema: {
          tags: ["Reports"],
          summary: "How to connect an MCP client: the endpoint, the header, the scopes a key needs, the tools",
          response: { 200: Envelope(McpConnection), ...errorResponses },
        },
      },
      async () => ok(connection),
    );
  };
}
