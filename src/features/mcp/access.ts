/** The API key scopes that open the MCP endpoint: either is enough (the tools only read reports). */
export const MCP_SCOPES = ["reports.read", "reports.update"] as const;

/** Where the MCP endpoint is, on the service's own origin. */
export const MCP_PATH = "/mcp";
