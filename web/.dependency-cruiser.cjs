/**
 * Import rules of the dashboard (web/src), run from web/ by `npm run check-imports` beside the
 * server's (../.dependency-cruiser.cjs), so paths here start at src/. As there, the graph is the one that runs: type-only imports are
 * erased and not checked.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "web-no-runtime-cycle",
      severity: "error",
      comment: "No run-time import cycle in the dashboard: a module read before it is initialized breaks the page.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "page-reaches-its-route-by-id",
      severity: "error",
      comment:
        "A page reaches its route through getRouteApi('<route id>'): an area's routes.tsx imports its pages " +
        "(lazily) and router.tsx imports the areas, so a page importing either back makes a cycle.",
      from: { path: "^src/pages/", pathNot: "/routes\\.tsx$" },
      to: { path: ["^src/pages/[^/]+/routes\\.tsx$", "^src/router\\.tsx$"] },
    },
    {
      name: "web-imports-no-server-code",
      severity: "error",
      comment:
        "The dashboard is a client of /api/v1 only: it knows the API through web/src/api/schema.d.ts, " +
        "generated from the OpenAPI document, never through the server's modules.",
      from: { path: "^src/" },
      to: { path: "^\\.\\./(src|scripts|test)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist)/" },
    tsPreCompilationDeps: false,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
