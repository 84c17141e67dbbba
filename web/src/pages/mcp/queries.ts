import { api, unwrap } from "../../api/client";

/** How a client connects: the endpoint, the header, the scopes and the tools (GET /api/v1/mcp). */
export const connectionQuery = {
  queryKey: ["mcp", "connection"],
  queryFn: async () => (await unwrap(api.GET("/api/v1/mcp"))).data,
};

/** The service's health and build (GET /api/v1/service): for account admins. */
export const serviceQuery = {
  queryKey: ["service"],
  queryFn: async () => (await unwrap(api.GET("/api/v1/service"))).data,
};
