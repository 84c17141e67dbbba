import { availableParallelism } from "node:os";
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
 * Files that run on the embedded database only. Every dashboard file (the pages in Chromium, the
 * dashboard's logic, its build and serving): the API under a page runs on both databases in its own
 * tests, and a page does not change with the database behind it. The other browser files (docs,
 * first contact). And the files that never open a database (parsers, the docs' links, the import
 * graph). Run twice they only cost CI time. Globs, so a new dashboard or browser file needs no line
 * here: three Chromium files that were missing from a list of names ran twice.
 */
const EMBEDDED_ONLY = [
  "test/dashboard-*.test.ts",
  "test/*-browser.test.ts",
  "test/docs-links.test.ts",
  "test/placeholders.test.ts",
  "test/timestamp-parser.test.ts",
  "test/log-redaction.test.ts",
];

export default defineConfig({
  test: {
    // Two files at a time even on a 2-core machine (Vitest's default there is one): a file spends
    // much of its time waiting on a child process, Chromium, PostgreSQL or a loopback receiver, and
    // the other file's work fills that time (both databases: 27-28 min here, about 35 one at a time).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      { test: { ...shared, name: "pglite", provide: { dbKind: "pglite" as const } } },
      ...(postgresUrl
        ? [{ test: { ...shared, name: "postgres", exclude: EMBEDDED_ONLY, provide: { dbKind: "postgres" as const } } }]
        : []),
    ],
  },
});
