import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/** Sealed by a key of the keyring: `v2:<key id>:<base64 of iv, tag, ciphertext>`. */
const VERSION = "v2";
/** Sealed by the key derived from JWT_SECRET, before SECRETS_KEY existed: `v1:<base64>`. */
const LEGACY_VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

export interface SecretsKey {
  readonly id: string;
  readonly key: Buffer;
}

/**
 * The keys that seal the secrets the service must read back (SECRETS_KEY), apart from the secret
 * that signs sessions: `<id>:<32 bytes in base64>[,<id>:<key>...]`. The first key seals, every
 * key opens (a stored secret names its key's id), so a key is rotated by putting the new one
 * first, re-sealing (`npm run secrets:reseal`) and then dropping the old one. `legacySecret`
 * (JWT_SECRET) opens what was sealed before the keyring existed, until it is re-sealed.
 */
export class SecretsKeyring {
  readonly #keys: ReadonlyMap<string, Buffer>;

  private constructor(
    readonly current: SecretsKey,
    keys: ReadonlyMap<string, Buffer>,
    readonly legacySecret?: string,
  ) {
    this.#keys = keys;
  }

  /** Parses a keyring; the error says what is wrong without repeating any key. */
  static parse(text: string): SecretsKeyring {
    const keys = new Map<string, Buffer>();
    const parts = text.split(",").map((part) => part.trim());
    for (const [index, part] of parts.entries()) {
      const colon = part.indexOf(":");
      const id = colon < 0 ? "" : part.slice(0, colon);
      const encoded = colon < 0 ? "" : part.slice(colon + 1);
      if (!KEY_ID.test(id)) {
        throw new Error(`key ${index + 1} must be written <id>:<base64 key>, the id 1 to 32 letters, digits, - or _`);
      }
      const key = Buffer.from(encoded, "base64");
      if (key.length !== KEY_BYTES || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
        throw new Error(`key '${id}' must be ${KEY_BYTES} bytes in base64 (openssl rand -base64 32)`);
      }
      if (keys.has(id)) throw new Error(`has the key id '${id}' twice`);
      keys.set(id, key);
    }
    const [first] = keys;
    if (!first) throw new Error("has no key");
    return new SecretsKeyring({ id: first[0], key: first[1] }, keys);
  }

  /** A new keyring of one random key, written as SECRETS_KEY is. */
  static generate(id = "k1"): string {
    return `${id}:${randomBytes(KEY_BYTES).toString("base64")}`;
  }

  /** The same keys, opening too what JWT_SECRET sealed before. */
  withLegacy(jwtSecret: string): SecretsKeyring {
    return new SecretsKeyring(this.current, this.#keys, jwtSecret);
  }

  key(id: string): Buffer | undefined {
    return this.#keys.get(id);
  }

  get ids(): string[] {
    return [...this.#keys.keys()];
  }

  /** Key ids only, should a keyring ever be logged or serialized (with the config, say). */
  toJSON(): { ids: string[] } {
    return { ids: this.ids };
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `SecretsKeyring(${this.ids.join(", ")})`;
  }
}

/** The key of one kind of secret: no two kinds share a key. */
function derive(secret: string | Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "", label, KEY_BYTES));
}

/**
 * Keeps a secret the service must read back (a signing secret, an OAuth refresh token) encrypted
 * at rest with AES-256-GCM, so it cannot be hashed like an API key. Its key is derived from the
 * keyring's first key under a label of the caller's; what was sealed under another key of the
 * keyring, or under JWT_SECRET before the keyring (the legacy key), still opens. A secret whose
 * key is gone cannot be opened: `open` then throws the caller's error, which says how to recover.
 */
export class SealedBox {
  readonly #keyring: SecretsKeyring;
  readonly #sealKey: Buffer;
  readonly #keys = new Map<string, Buffer>();
  readonly #legacyKey: Buffer | undefined;

  constructor(
    keyring: SecretsKeyring,
    private readonly label: string,
    private readonly unreadable: () => Error,
  ) {
    this.#keyring = keyring;
    this.#sealKey = derive(keyring.current.key, label);
    this.#legacyKey = keyring.legacySecret === undefined ? undefined : derive(keyring.legacySecret, label);
  }

  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#sealKey, iv);
    const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    const payload = Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64");
    return `${VERSION}:${this.#keyring.current.id}:${payload}`;
  }

  open(stored: string): string {
    const parts = stored.split(":");
    const key = this.#keyFor(parts);
    const payload = parts.at(-1);
    if (key === undefined || payload === undefined) throw this.unreadable();
    const raw = Buffer.from(payload, "base64");
    try {
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
    } catch {
      throw this.unreadable();
    }
  }

  /** Whether `open` can read it: false for a secret sealed by a key the keyring no longer has. */
  opens(stored: string): boolean {
    try {
      this.open(stored);
      return true;
    } catch {
      return false;
    }
  }

  /** Whether it is sealed by the key that seals now (re-sealing it would change nothing). */
  isCurrent(stored: string): boolean {
    return stored.startsWith(`${VERSION}:${this.#keyring.current.id}:`);
  }

  #keyFor(parts: string[]): Buffer | undefined {
    if (parts.length === 2 && parts[0] === LEGACY_VERSION) return this.#legacyKey;
    if (parts.length !== 3 || parts[0] !== VERSION) return undefined;
    const id = parts[1] ?? "";
    const cached = this.#keys.get(id);
    if (cached) return cached;
    const key = this.#keyring.key(id);
    if (key === undefined) return undefined;
    const derived = derive(key, this.label);
    this.#keys.set(id, derived);
    return derived;
  }
}
