/**
 * Removes the demo tenant (its login, keys, catalog and traffic), so that the next `npm start`
 * seeds a new one and prints its new login, keys and postback URL once:
 *   npm run demo:reset
 * Stop the service first. On the embedded database the data directory's lock refuses while the
 * service runs (naming its pid); on PostgreSQL a fresh worker or scheduler heartbeat does.
 * Other tenants are not touched.
 */
import { loadConfig } from "../src/config.js";
import { removeDemoTenant, ServiceRunningError } from "../src/features/demo/reset.js";
import { systemClock } from "../src/platform/clock.js";
import { migrate, openDatabase } from "../src/platform/db/index.js";
import { DirectoryLockedError } from "../src/platform/dir-lock.js";

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = await openDatabase(config);
  try {
    await migrate(db.unbounded());
    const { tenantId } = await removeDemoTenant(db, systemClock.now());
    console.log(
      tenantId === null
        ? "No demo tenant to remove; the next start seeds one."
        : `Demo tenant ${tenantId} removed with its data. Start the service (npm start) for a new demo login.`,
    );
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  // These name what to do; a stack trace would only hide the message.
  if (error instanceof DirectoryLockedError || error instanceof ServiceRunningError) {
    console.error(`Nothing removed: ${error.message}`);
  } else console.error(error);
  process.exit(1);
});
