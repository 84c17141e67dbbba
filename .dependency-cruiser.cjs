/**
 * Import rules of src/, run by `npm run check` (docs/architecture.md, "Code layout rules").
 *
 * The graph is the one Node runs: dependencies are read after TypeScript's compilation
 * (tsPreCompilationDeps: false), so type-only imports, erased at run time, are left out. A
 * type-only import cannot make a module read another's binding before it is initialized; a
 * run-time cycle can (importing a service first then throws "Cannot access ... before
 * initialization", whatever order app.ts happens to import things in).
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-runtime-cycle",
      severity: "error",
      comment:
        "No run-time import cycle in src/. A feature's index.ts exports its service API only; route plugins are " +
        "imported by app.ts from their own files, and route helpers (callerOf) from files apart from auth's routes.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "feature-imports-features-through-index",
      severity: "error",
      comment:
        "A feature uses another only through that feature's index.ts, its service API: its other files are its own " +
        "and may change without the others knowing. Type-only imports are erased at run time and not checked here.",
      from: { path: "^src/features/([^/]+)/" },
      to: { path: "^src/features/[^/]+/", pathNot: ["^src/features/$1/", "^src/features/[^/]+/index\\.ts$"] },
    },
    {
      name: "platform-imports-no-feature",
      severity: "error",
      comment: "src/platform is the features' foundation: features import it, it imports no feature.",
      from: { path: "^src/platform/" },
      to: { path: "^src/features/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|web|test|bench|scripts)/" },
    tsPreCompilationDeps: false,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
