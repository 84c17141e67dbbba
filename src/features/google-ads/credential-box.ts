import { SealedBox, type SecretsKeyring } from "../../platform/sealed-box.js";

/** The label their key is derived under (SealedBox): also what `npm run secrets:reseal` opens them with. */
export const GOOGLE_ADS_SECRETS_LABEL = "google-ads-credentials";

/** Raised when stored credentials cannot be decrypted: the key they were sealed with is gone. */
export class CredentialsUnreadableError extends Error {
  constructor() {
    super(
      "The Google Ads credentials cannot be decrypted (their key is no longer in SECRETS_KEY): enter credentials.clientSecret and credentials.refreshToken again",
    );
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

  constructor(keyring: SecretsKeyring) {
    this.#box = new SealedBox(keyring, GOOGLE_ADS_SECRETS_LABEL, () => new CredentialsUnreadableError());
  }

  /** Whether the stored credentials open with the keys at hand. */
  opens(stored: string): boolean {
    return this.#box.opens(stored);
  }

  seal(secrets: SealedSecrets): string {
    return this.#box.seal(JSON.stringify(secrets));
  }

  open(stored: string): SealedSecrets {
    return JSON.parse(this.#box.open(stored)) as SealedSecrets;
  }
}
