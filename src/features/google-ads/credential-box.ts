import { SealedBox } from "../../platform/sealed-box.js";

/** Raised when stored credentials cannot be decrypted: the key they were sealed with is gone. */
export class CredentialsUnreadableError extends Error {
  constructor() {
    super("The Google Ads credentials cannot be decrypted (was JWT_SECRET changed?); save them again");
    this.name = "CredentialsUnreadableError";
  }
}

/** What is sealed: the two OAuth values that grant access to the Google Ads account. */
export interface SealedSecrets {
  clientSecret: string;
  refreshToken: string;
}

/**
 * Keeps the OAuth client secret and refresh token encrypted at rest (see SealedBox), as
 * operational webhook secrets are: they must be read back to ask Google for an access token.
 */
export class CredentialBox {
  readonly #box: SealedBox;

  constructor(serviceSecret: string) {
    this.#box = new SealedBox(serviceSecret, "google-ads-credentials", () => new CredentialsUnreadableError());
  }

  seal(secrets: SealedSecrets): string {
    return this.#box.seal(JSON.stringify(secrets));
  }

  open(stored: string): SealedSecrets {
    return JSON.parse(this.#box.open(stored)) as SealedSecrets;
  }
}
