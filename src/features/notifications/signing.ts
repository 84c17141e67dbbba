import { createHmac, randomBytes } from "node:crypto";
import { SealedBox, type SecretsKeyring } from "../../platform/sealed-box.js";

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

/** The label their key is derived under (SealedBox): also what `npm run secrets:reseal` opens them with. */
export const NOTIFICATION_SECRETS_LABEL = "notification-webhook-secrets";

/** Raised when a stored secret cannot be decrypted: the key it was sealed with is gone. */
export class SecretUnreadableError extends Error {
  constructor() {
    super("The signing secret cannot be decrypted (its key is no longer in SECRETS_KEY); rotate the webhook's secret");
    this.name = "SecretUnreadableError";
  }
}

/**
 * Keeps signing secrets encrypted at rest (see SealedBox): they must be read back to sign.
 * Dropping their key from SECRETS_KEY makes them unreadable; a rotation issues readable ones again.
 */
export class SecretBox extends SealedBox {
  constructor(keyring: SecretsKeyring) {
    super(keyring, NOTIFICATION_SECRETS_LABEL, () => new SecretUnreadableError());
  }
}
