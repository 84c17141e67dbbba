import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";

const SECRET_PREFIX = "whsec_";
/** 32 random bytes: Standard Webhooks asks for 24 to 64. */
const SECRET_BYTES = 32;

/** A new signing secret: `whsec_` + base64 of 32 random bytes, shown to the caller once. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64");
}

/**
 * One Standard Webhooks signature, `v1,<base64 HMAC-SHA256>` over `{id}.{timestamp}.{body}`,
 * keyed with the base64-decoded part of the secret after `whsec_`. The body is signed exactly
 * as sent.
 */
export function sign(secret: string, messageId: string, timestampS: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
  const mac = createHmac("sha256", key).update(`${messageId}.${timestampS}.${body}`).digest("base64");
  return `v1,${mac}`;
}

/** The signature header: one signature per live secret, space-separated (newest first). */
export function signatureHeader(secrets: readonly string[], messageId: string, timestampS: number, body: string) {
  return secrets.map((secret) => sign(secret, messageId, timestampS, body)).join(" ");
}

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Raised when a stored secret cannot be decrypted: the key it was sealed with is gone. */
export class SecretUnreadableError extends Error {
  constructor() {
    super("The signing secret cannot be decrypted (was JWT_SECRET changed?); rotate the webhook's secret");
    this.name = "SecretUnreadableError";
  }
}

/**
 * Keeps signing secrets encrypted at rest (AES-256-GCM). They must be read back to sign, so
 * they cannot be hashed like API keys. The key is derived from the service secret (JWT_SECRET),
 * which every node of a deployment shares; changing it makes stored secrets unreadable, and a
 * rotation issues readable ones again.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(serviceSecret: string) {
    this.#key = Buffer.from(hkdfSync("sha256", serviceSecret, "", "notification-webhook-secrets", 32));
  }

  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64")}`;
  }

  open(stored: string): string {
    const [version, payload] = stored.split(":");
    if (version !== VERSION || payload === undefined) throw new SecretUnreadableError();
    const raw = Buffer.from(payload, "base64");
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.#key, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
    } catch {
      throw new SecretUnreadableError();
    }
  }
}
