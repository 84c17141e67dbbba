import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { renderApiReference } from "@scalar/client-side-rendering";
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { scalarBundleGzip } from "./scalar-bundle.js";

/**
 * The Scalar API reference page: what @scalar/fastify-api-reference serves (the page, a redirect
 * to it from the path without the slash, its script under js/), with the script held once and
 * compressed (scalar-bundle.ts) instead of the plugin's two copies held from the start.
 */
export interface ApiReferenceOptions {
  /** Where the page is, without a trailing slash: `/api/docs`. */
  routePrefix: string;
  /** Scalar's configuration, as the page passes it to the script. */
  configuration: Record<string, unknown>;
}

const SCRIPT_PATH = "js/scalar.js";
/** Hidden from the OpenAPI document, as the plugin's routes were. */
const HIDDEN = { schema: { hide: true } };
/** The script changes only with the installed package: a browser keeps it an hour. */
const SCRIPT_CACHE = "public, max-age=3600";

/** True when the request's Accept-Encoding takes gzip (or anything) with a weight above zero. */
function acceptsGzip(request: FastifyRequest): boolean {
  const header = request.headers["accept-encoding"];
  if (typeof header !== "string") return false;
  return header.split(",").some((part) => {
    const [name = "", ...params] = part.trim().toLowerCase().split(";");
    if (name.trim() !== "gzip" && name.trim() !== "*") return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

export function apiReferenceRoutes(options: ApiReferenceOptions): FastifyPluginAsync {
  const prefix = options.routePrefix;
  // The configuration is fixed: the page is rendered once.
  const page = renderApiReference({
    config: { _integration: "fastify", ...options.configuration },
    cdn: SCRIPT_PATH,
  });
  return async (app) => {
    app.get(prefix, HIDDEN, async (request, reply) => {
      const { pathname } = new URL(request.url, "http://localhost");
      return reply.redirect(`${pathname}/`, 301);
    });
    app.get(`${prefix}/`, HIDDEN, async (_request, reply) =>
      reply.header("content-type", "text/html; charset=utf-8").send(page),
    );
    app.get(`${prefix}/${SCRIPT_PATH}`, HIDDEN, async (request, reply) => {
      const gzipped = await scalarBundleGzip();
      reply
        .header("content-type", "application/javascript; charset=utf-8")
        .header("cache-control", SCRIPT_CACHE)
        .header("vary", "accept-encoding");
      if (acceptsGzip(request)) return reply.header("content-encoding", "gzip").send(gzipped);
      // Rare (every browser takes gzip): decompressed as it is sent, never held whole.
      return reply.send(Readable.from([gzipped]).pipe(createGunzip()));
    });
  };
}
