import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { createGunzip } from "node:zlib";
import swaggerUi from "@fastify/swagger-ui";
import { renderApiReference } from "@scalar/client-side-rendering";
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from "fastify";
import { compressAll, compressFixedAnswers, lazy, sendRepresentation } from "./compressed.js";
import { docsPolicy, newNonce, setDocsHeaders, sha256Source } from "./page-headers.js";
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
  /** PUBLIC_BASE_URL: the document's server, which the page may send requests to. */
  publicBaseUrl: string;
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

// Stands for the answer's nonce in the page rendered once; no configuration value holds it.
const NONCE_MARK = "\u0000nonce\u0000";

/**
 * Scalar's bundle carries zod, which probes `Function("")` to choose compiled validators: under a
 * policy without 'unsafe-eval' the probe is refused and reported as a violation. zod reads its
 * configuration from this global before the probe; `jitless` skips it (and eval altogether).
 */
const ZOD_JITLESS = "globalThis.__zod_globalConfig = { ...globalThis.__zod_globalConfig, jitless: true };";

/**
 * The page with a place for the answer's nonce on its inline scripts: the one that starts Scalar
 * and, before the bundle, the one that keeps zod from probing eval.
 */
function pageWithNonceMark(page: string): string {
  const bundleTag = /<script\b[^>]*\ssrc="js\/scalar\.js"[^>]*><\/script>/i;
  if (!bundleTag.test(page)) throw new Error("The Scalar page has no script tag for its bundle");
  return (
    page
      .replace(bundleTag, (tag) => `<script>${ZOD_JITLESS}</script>\n    ${tag}`)
      // Inline scripts only: the bundle's own tag is admitted by 'self'.
      .replace(/<script\b(?![^>]*\ssrc=)/gi, `<script nonce="${NONCE_MARK}"`)
  );
}

/**
 * Scalar's styles: its bundle creates style elements without the nonce (its theme, toasts) and
 * sets style attributes (`--line-count` on code blocks, a scrollbar probe), which neither a nonce
 * nor a hash can admit. Styles only: the policy still lets them load nothing from elsewhere.
 */
const SCALAR_STYLES = ["'unsafe-inline'"];

export function apiReferenceRoutes(options: ApiReferenceOptions): FastifyPluginAsync {
  const prefix = options.routePrefix;
  // The configuration is fixed: the page is rendered once, each answer gets its own nonce.
  const page = pageWithNonceMark(
    renderApiReference({
      config: { _integration: "fastify", ...options.configuration },
      cdn: SCRIPT_PATH,
    }),
  );
  const policy = docsPolicy(options.publicBaseUrl, { styles: SCALAR_STYLES });
  return async (app) => {
    app.addHook("onRequest", async (_request, reply) => setDocsHeaders(reply, policy));
    app.get(prefix, HIDDEN, async (request, reply) => {
      const { pathname } = new URL(request.url, "http://localhost");
      return reply.redirect(`${pathname}/`, 301);
    });
    app.get(`${prefix}/`, HIDDEN, async (_request, reply) => {
      const nonce = newNonce();
      setDocsHeaders(reply, docsPolicy(options.publicBaseUrl, { scriptNonce: nonce, styles: SCALAR_STYLES }));
      return reply.header("content-type", "text/html; charset=utf-8").send(page.replaceAll(NONCE_MARK, nonce));
    });
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

/**
 * The hashes of the style elements Swagger UI renders (the logo's SVG carries one), read from the
 * installed package's files so that an upgrade brings its own; its page has no other inline
 * script or style.
 */
async function swaggerUiStyleHashes(): Promise<string[]> {
  const dir = join(dirname(fileURLToPath(import.meta.resolve("@fastify/swagger-ui"))), "static");
  const hashes = new Set<string>();
  for (const file of ["swagger-ui-bundle.js", "swagger-ui-standalone-preset.js"]) {
    const source = await readFile(join(dir, file), "utf8");
    for (const match of source.matchAll(/createElement\("style",null,("(?:[^"\\]|\\.)*")\)/g)) {
      hashes.add(sha256Source(JSON.parse(match[1] as string) as string));
    }
  }
  return [...hashes];
}

/** Swagger UI (@fastify/swagger-ui) at `routePrefix`, its page and files under the pages' headers. */
export function swaggerUiRoutes(options: { routePrefix: string; publicBaseUrl: string }): FastifyPluginAsync {
  return async (app) => {
    const policy = docsPolicy(options.publicBaseUrl, { styles: await swaggerUiStyleHashes() });
    app.addHook("onRequest", async (_request, reply) => setDocsHeaders(reply, policy));
    // Its bundle (1.4 MB) and its copy of the document, compressed once each (compressed.ts).
    app.addHook("onSend", compressFixedAnswers());
    await app.register(swaggerUi, { routePrefix: options.routePrefix });
  };
}

/**
 * A GET route at `path` answering `app`'s OpenAPI document (~0.5 MB), serialized and compressed
 * at its first request and then kept (compressed.ts): the document does not change while the
 * service runs.
 */
export function openApiDocumentRoute(app: FastifyInstance, path: string): void {
  const document = lazy(() => compressAll(Buffer.from(JSON.stringify(app.swagger()), "utf8")));
  app.get(path, { schema: { hide: true } }, async (request, reply) => {
    const body = await document();
    return reply
      .header("content-type", "application/json; charset=utf-8")
      .send(sendRepresentation(request, reply, body));
  });
}
