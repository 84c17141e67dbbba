import { createHash, randomBytes } from "node:crypto";
import type { FastifyReply } from "fastify";

/**
 * The security headers of the documentation pages (/api/docs, /api/swagger and their assets).
 * Both pages run only scripts and styles this server serves (the Scalar bundle, Swagger UI's
 * files): a Content-Security-Policy allows just those, so a script injected through the OpenAPI
 * document or a crafted link has nothing to run with, and no other site may frame the pages
 * (clickjacking the "Authorize" dialog into pasting a key).
 */

/** The origin of PUBLIC_BASE_URL: the document's server, where "Try it" sends requests. */
function originOf(publicBaseUrl: string): string {
  return new URL(publicBaseUrl).origin;
}

/** What a page may run inline beyond this server's files. */
interface InlineSources {
  /** Admits the page's own inline scripts (a fresh one on every answer). */
  scriptNonce?: string;
  /** `style-src` beyond 'self': hashes of style elements, or 'unsafe-inline' (see routes.ts). */
  styles?: readonly string[];
}

/**
 * The policy of a page: scripts and styles from this server only, plus what `inline` admits.
 * Images may be `data:` and `blob:` URLs (icons, a downloaded document), fonts `data:` ones;
 * requests go to this server or PUBLIC_BASE_URL's origin (the document's server, where "Try it"
 * sends them). So even an admitted inline style cannot load anything from elsewhere.
 */
export function docsPolicy(publicBaseUrl: string, inline: InlineSources = {}): string {
  const self = "'self'";
  const script = inline.scriptNonce === undefined ? "" : ` 'nonce-${inline.scriptNonce}'`;
  const styles = (inline.styles ?? []).map((source) => ` ${source}`).join("");
  return [
    "default-src 'none'",
    `script-src ${self}${script}`,
    `style-src ${self}${styles}`,
    `img-src ${self} data: blob:`,
    `font-src ${self} data:`,
    `connect-src ${self} ${originOf(publicBaseUrl)}`,
    `form-action ${self}`,
    "base-uri 'none'",
    "object-src 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The CSP source admitting an inline script or style element whose text is `text`. */
export function sha256Source(text: string): string {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

/** A fresh nonce for one answer: 128 random bits. */
export function newNonce(): string {
  return randomBytes(16).toString("base64");
}

/** Sets the headers every answer of the documentation pages carries, with `policy`. */
export function setDocsHeaders(reply: FastifyReply, policy: string): void {
  reply
    .header("content-security-policy", policy)
    .header("x-frame-options", "DENY")
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer");
}
