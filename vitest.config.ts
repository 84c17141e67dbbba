import { defineConfig } from "vitest/config";

// Every test file runs on the embedded database; with TEST_DATABASE_URL set, the whole suite
// runs a second time on PostgreSQL (each file in a schema of its own).
const postgresUrl = process.env.TEST_DATABASE_URL;

const shared = {
  include: ["test/**/*.test.ts", "src/**/*.test.ts"],
  globalSetup: ["test/helpers/global-setup.ts"],
  testTimeout: 30_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: "pglite", provide: { dbKind: "pglite" as const } } },
      ...(postgresUrl ? [{ test: { ...shared, name: "postgres", provide: { dbKind: "postgres" as const } } }] : []),
    ],
  },
});
