import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Keeps a secret the service must read back (a signing secret, an OAuth refresh token) encrypted
 * at rest with AES-256-GCM, so it cannot be hashed like an API key. The key is derived from the
 * service secret (JWT_SECRET, which every node of a deployment shares) under a label of the
 * caller's, so no two kinds of secret share a key. Changing JWT_SECRET makes what was sealed
 * unreadable: `open` then throws the caller's error, which says how to recover.
 */
export class SealedBox {
  readonly #key: Buffer;

  constructor(
    serviceSecret: string,
    label: string,
    private readonly unreadable: () => Error,
  ) {
    this.#key = Buffer.from(hkdfSync("sha256", serviceSecret, "", label, 32));
  }

  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64")}`;
  }

  open(stored: string): string {
    const [version, payload] = stored.split(":");
    if (version !== VERSION || payload === undefined) throw this.unreadable();
    const raw = Buffer.from(payload, "base64");
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.#key, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
    } catch {
      throw this.unreadable();
    }
  }
}
