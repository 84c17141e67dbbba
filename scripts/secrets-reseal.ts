/**
 * Seals every stored secret (Google Ads credentials, operational webhook signing secrets) again
 * with the first key of SECRETS_KEY:
 *   npm run secrets:reseal
 * Rotation (docs/operations.md, Secrets key): put the new key first in SECRETS_KEY on every node,
 * run this, then drop the old key. It also moves secrets sealed by JWT_SECRET (before
 * SECRETS_KEY existed) to the keyring. A second run finds nothing to do. On PostgreSQL the
 * service may keep running; on the embedded database stop it first (the data directory's lock
 * refuses while it runs). It prints counts, never a secret.
 */
import { ConfigError, loadConfig } from "../src/config.js";
import { GOOGLE_ADS_SEALED_COLUMNS } from "../src/features/google-ads/index.js";
import { NOTIFICATION_SEALED_COLUMNS } from "../src/features/notifications/index.js";
import { migrate, openDatabase } from "../src/platform/db/index.js";
import { DirectoryLockedError } from "../src/platform/dir-lock.js";
import { type ResealCount, resealColumn } from "../src/platform/reseal.js";
import { nodeSecrets, requireSharedSecrets } from "../src/platform/secrets.js";

const line = (c: ResealCount) =>
  `${c.table}.${c.column}: ${c.resealed} resealed, ${c.current} already current, ${c.unreadable} unreadable` +
  (c.changedMeanwhile > 0 ? `, ${c.changedMeanwhile} changed meanwhile (run again)` : "");

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  requireSharedSecrets(config);
  const db = await openDatabase(config);
  try {
    await migrate(db.unbounded());
    const { keyring, generatedKeyFile } = await nodeSecrets(config);
    console.log(
      `Sealing with key '${keyring.current.id}' of ${generatedKeyFile ?? "SECRETS_KEY"} (keys: ${keyring.ids.join(", ")})`,
    );
    let unreadable = 0;
    for (const column of [...GOOGLE_ADS_SEALED_COLUMNS, ...NOTIFICATION_SEALED_COLUMNS]) {
      const count = await resealColumn(db.unbounded(), keyring, column, (c) => console.log(`  ${line(c)}`));
      unreadable += count.unreadable;
    }
    console.log(
      unreadable === 0
        ? `Done: every stored secret is sealed with key '${keyring.current.id}'; older keys may be dropped.`
        : `Done, but ${unreadable} stored secrets open with no key at hand: their owners must enter them again (docs/operations.md).`,
    );
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  if (error instanceof DirectoryLockedError || error instanceof ConfigError) console.error(error.message);
  else console.error(error);
  process.exit(1);
});
