import { existsSync } from "node:fs";
import { join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyPluginAsync, FastifyReply } from "fastify";

/** Where scripts/build-web.ts writes the dashboard. */
export const DASHBOARD_DIST = fileURLToPath(new URL("../../../web/dist", import.meta.url));

/**
 * Paths the dashboard never answers: the API and the other ways in keep their own answers,
 * their own 404 included, whatever the client routes are.
 */
const SERVICE_PREFIXES = ["/api", "/go", "/postback", "/collect", "/mcp", "/metrics", "/active-version"];

/**
 * The dashboard's content security policy: everything from this origin only, no inline script,
 * no plugin, no framing. Inline style attributes are allowed (style-src-attr) because the
 * chart library writes its tooltip as HTML with style attributes; style elements are not.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "style-src-attr 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** Hashed names change with their content: a year, immutable. */
const HASHED_CACHE = "public, max-age=31536000, immutable";
/** The page names the current hashed assets: always revalidated, so a new build shows at once. */
const PAGE_CACHE = "no-cache";
/** Unhashed files beside it (the icon): an hour. */
const OTHER_CACHE = "public, max-age=3600";

function isServicePath(path: string): boolean {
  return SERVICE_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

function pageHeaders(reply: FastifyReply): void {
  reply.header("cache-control", PAGE_CACHE);
  reply.header("content-security-policy", DASHBOARD_CSP);
  reply.header("x-content-type-options", "nosniff");
  reply.header("referrer-policy", "no-referrer");
  reply.header("x-frame-options", "DENY");
}

/** A hashed asset's path: under /assets/, no dot segment, not a precompressed sibling or hidden file. */
const isLateAsset = (path: string, last: string) =>
  path.startsWith("/assets/") && !path.includes("..") && !last.startsWith(".") && !/\.(br|gz)$/.test(last);

/**
 * Serves the built dashboard at `/`: its files (precompressed brotli or gzip, chosen by the
 * request's Accept-Encoding), and index.html for every other GET outside the service's own
 * paths, so a client route (/issues/iss_1) opened directly or reloaded shows its page.
 */
export function dashboardRoutes(options: { root?: string } = {}): FastifyPluginAsync {
  const root = options.root ?? DASHBOARD_DIST;
  return async (app) => {
    if (!existsSync(join(root, "index.html"))) {
      // Not built (npm start builds it first): say how, rather than a bare 404.
      app.log.warn({ root }, "dashboard not built: run `npx tsx scripts/build-web.ts`; / answers 503");
      app.get("/", { schema: { hide: true } }, async (_request, reply) =>
        reply
          .code(503)
          .type("text/plain; charset=utf-8")
          .send("The dashboard is not built. Run `npx tsx scripts/build-web.ts` (npm start does) and reload."),
      );
      return;
    }
    const assets = `${sep}assets${sep}`;
    await app.register(fastifyStatic, {
      root,
      prefix: "/",
      // One route per built file, found at start; every other path goes to the fallback below.
      wildcard: false,
      index: false,
      preCompressed: true,
      schemaHide: true,
      cacheControl: false,
      globIgnore: ["**/*.br", "**/*.gz", "**/.*"],
      setHeaders(reply, path) {
        if (path.endsWith(".html")) pageHeaders(reply);
        else reply.header("cache-control", path.includes(assets) ? HASHED_CACHE : OTHER_CACHE);
        reply.header("x-content-type-options", "nosniff");
      },
    });

    const fallback = async (request: { url: string }, reply: FastifyReply) => {
      const path = request.url.split("?")[0] ?? "/";
      const last = path.slice(path.lastIndexOf("/") + 1);
      if (isServicePath(path)) return reply.callNotFound();
      // A hashed asset of a build made after the service started (npm run build-web while it
      // runs): the routes above were found at start, so it is looked up here.
      if (isLateAsset(path, last) && existsSync(join(root, path))) {
        return reply.sendFile(path.slice(1));
      }
      // A missing file (a name with an extension) is a 404, not a page a script tag would run.
      if (last.includes(".")) return reply.callNotFound();
      pageHeaders(reply);
      return reply.sendFile("index.html");
    };
    app.get("/", { schema: { hide: true } }, fallback);
    app.get("/*", { schema: { hide: true } }, fallback);
  };
}
