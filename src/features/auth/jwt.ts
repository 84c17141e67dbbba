import { randomUUID } from "node:crypto";
import { jwtVerify, SignJWT } from "jose";

const ISSUER = "tracking-platform";
const LIFETIME_S = 12 * 3600;

export interface SessionClaims {
  userId: string;
  tenantId: string;
}

/** A verified token's claims, with the second its token stops being valid (its `exp`). */
export interface VerifiedSession extends SessionClaims {
  expiresAtS: number;
}

/** Signs and checks the dashboard's bearer tokens (HS256). */
export class JwtSigner {
  // Imported once: jose would otherwise import the raw secret on every verification.
  readonly #key: Promise<CryptoKey>;

  constructor(secret: string) {
    this.#key = crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
  }

  async sign(claims: SessionClaims, now: Date): Promise<{ token: string; expiresAt: Date }> {
    const issuedAt = Math.floor(now.getTime() / 1000);
    const expiresAt = new Date((issuedAt + LIFETIME_S) * 1000);
    const token = await new SignJWT({ tid: claims.tenantId })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(ISSUER)
      .setSubject(claims.userId)
      .setIssuedAt(issuedAt)
      // Its own id: two sign-ins of one person in one second are still two tokens, and signing
      // one out (revoked_sessions) leaves the other working.
      .setJti(randomUUID())
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(await this.#key);
    return { token, expiresAt };
  }

  /** The claims of a valid token, or null for a bad signature, wrong issuer or expired token. */
  async verify(token: string, now: Date): Promise<VerifiedSession | null> {
    try {
      const { payload } = await jwtVerify(token, await this.#key, {
        issuer: ISSUER,
        algorithms: ["HS256"],
        currentDate: now,
      });
      if (typeof payload.sub !== "string" || typeof payload.tid !== "string" || typeof payload.exp !== "number") {
        return null;
      }
      return { userId: payload.sub, tenantId: payload.tid, expiresAtS: payload.exp };
    } catch {
      return null;
    }
  }
}
