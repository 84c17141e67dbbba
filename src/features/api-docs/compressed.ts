import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * The documentation's large answers (the ~0.5 MB OpenAPI document, Swagger UI's files) sent
 * compressed. They do not change while the service runs, so each is compressed once, at its
 * first request (not at start-up), and kept with an ETag: later answers cost no CPU, and a
 * browser that has it gets a 304.
 */

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** One answer in every encoding a client may take. */
export interface Representations {
  identity: Buffer;
  br: Buffer;
  gzip: Buffer;
  /** Strong, from the identity bytes: every encoding of the same bytes is the same resource. */
  etag: string;
}

export async function compressAll(identity: Buffer): Promise<Representations> {
  const [br, gz] = await Promise.all([
    // A moderate quality: about gzip's time, well below its size (11 takes seconds for 0.5 MB).
    brotli(identity, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 6, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length },
    }),
    gzipAsync(identity, { level: 6 }),
  ]);
  const etag = `"${createHash("sha256").update(identity).digest("base64url").slice(0, 27)}"`;
  return { identity, br, gzip: gz, etag };
}

/** The weight Accept-Encoding gives `coding` (or `*`), 0 when it is refused or not named. */
function weightOf(header: string, coding: string): number {
  let star: number | undefined;
  for (const part of header.split(",")) {
    const [name = "", ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (name.trim() === coding) return Number.isFinite(weight) ? weight : 0;
    if (name.trim() === "*") star = Number.isFinite(weight) ? weight : 0;
  }
  return star ?? 0;
}

/** The encoding to answer with: brotli when taken, else gzip, else none. */
export function chooseEncoding(request: FastifyRequest): "br" | "gzip" | undefined {
  const header = request.headers["accept-encoding"];
  if (typeof header !== "string") return undefined;
  if (weightOf(header, "br") > 0) return "br";
  if (weightOf(header, "gzip") > 0) return "gzip";
  return undefined;
}

/** True when If-None-Match names `etag` (or is `*`). */
function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers["if-none-match"];
  if (typeof header !== "string") return false;
  return header.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t === etag || t === `W/${etag}`;
  });
}

/**
 * Sends `body` in the encoding the request takes, with its ETag, or a 304. Returns what the
 * reply sends (for a handler or an onSend hook).
 */
export function sendRepresentation(request: FastifyRequest, reply: FastifyReply, body: Representations): Buffer | "" {
  reply.header("etag", body.etag).header("vary", "accept-encoding");
  if (notModified(request, body.etag)) {
    reply.code(304).removeHeader("content-length");
    return "";
  }
  const encoding = chooseEncoding(request);
  reply.removeHeader("content-length");
  if (encoding === undefined) return body.identity;
  reply.header("content-encoding", encoding);
  return body[encoding];
}

/** A value made once at its first use; a failure lets the next use try again. */
export function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= make().catch((error: unknown) => {
      value = undefined;
      throw error;
    });
    return value;
  };
}

/** Worth compressing: text formats the documentation pages serve. */
const COMPRESSIBLE = /^(application\/(json|javascript|x-yaml)|text\/|image\/svg\+xml)/i;
/** The most answers one scope keeps; its paths are a fixed few (Swagger UI's files). */
const MAX_ENTRIES = 64;

async function bytesOf(payload: unknown): Promise<Buffer | undefined> {
  if (typeof payload === "string") return Buffer.from(payload, "utf8");
  if (Buffer.isBuffer(payload)) return payload;
  if (payload instanceof Readable) {
    const chunks: Buffer[] = [];
    for await (const chunk of payload) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return Buffer.concat(chunks);
  }
  return undefined;
}

/**
 * An onSend hook for a scope whose successful GET answers are fixed per path (Swagger UI's page,
 * files and document): each is compressed once and then served from memory in the encoding the
 * request takes, with an ETag and 304.
 */
export function compressFixedAnswers() {
  const cache = new Map<string, Promise<Representations>>();
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    if (request.method !== "GET" || reply.statusCode !== 200 || reply.hasHeader("content-encoding")) return payload;
    if (!COMPRESSIBLE.test(String(reply.getHeader("content-type") ?? ""))) return payload;
    const path = new URL(request.url, "http://localhost").pathname;
    let entry = cache.get(path);
    if (entry === undefined) {
      if (cache.size >= MAX_ENTRIES) return payload;
      const bytes = await bytesOf(payload);
      if (bytes === undefined) return payload;
      entry = compressAll(bytes);
      cache.set(path, entry);
      entry.catch(() => cache.delete(path));
    } else if (payload instanceof Readable) {
      // Served from memory: the file opened for this answer is not read.
      payload.destroy();
    }
    // The file server's own validators describe the file, not these bytes.
    reply.removeHeader("last-modified");
    return sendRepresentation(request, reply, await entry);
  };
}
