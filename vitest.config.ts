import { defineConfig } from "vitest/config";

// Every test file runs on the embedded database; with TEST_DATABASE_URL set, the suite runs a
// second time on PostgreSQL (each file in a schema of its own), but for EMBEDDED_ONLY.
const postgresUrl = process.env.TEST_DATABASE_URL;

const shared = {
  include: ["test/**/*.test.ts", "src/**/*.test.ts"],
  globalSetup: ["test/helpers/global-setup.ts"],
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

/**
 * Files that run on the embedded database only. The pages in Chromium: the API under them runs on
 * both databases in its own tests, and a page does not change with the database behind it. And the
 * files that never open a database (parsers, the dashboard's logic, the docs' links, the import
 * graph). Run twice they only cost CI time.
 */
const EMBEDDED_ONLY = [
  "test/dashboard-api-keys.test.ts",
  "test/dashboard-browser.test.ts",
  "test/dashboard-catalog.test.ts",
  "test/dashboard-composites.test.ts",
  "test/dashboard-conversions.test.ts",
  "test/dashboard-integration-tests.test.ts",
  "test/dashboard-issues.test.ts",
  "test/dashboard-mcp.test.ts",
  "test/dashboard-notifications.test.ts",
  "test/dashboard-reports.test.ts",
  "test/dashboard-settings.test.ts",
  "test/dashboard-traffic-sources.test.ts",
  "test/dashboard-usage.test.ts",
  "test/dashboard-webhooks.test.ts",
  "test/docs-browser.test.ts",
  "test/first-contact-browser.test.ts",
  "test/dashboard-*-logic.test.ts",
  "test/dashboard-build.test.ts",
  "test/dashboard-client.test.ts",
  "test/docs-links.test.ts",
  "test/placeholders.test.ts",
  "test/timestamp-parser.test.ts",
  "test/log-redaction.test.ts",
];

export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: "pglite", provide: { dbKind: "pglite" as const } } },
      ...(postgresUrl
        ? [{ test: { ...shared, name: "postgres", exclude: EMBEDDED_ONLY, provide: { dbKind: "postgres" as const } } }]
        : []),
    ],
  },
});
