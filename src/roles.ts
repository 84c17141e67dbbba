export const ROLES = ["api", "worker", "scheduler"] as const;
export type Role = (typeof ROLES)[number];

/** `--role api|worker|scheduler` (repeatable or comma-separated); every role when absent. */
export function parseRoles(argv: readonly string[]): Role[] {
  const picked: string[] = [];
  argv.forEach((arg, index) => {
    if (arg === "--role") picked.push(...(argv[index + 1] ?? "").split(","));
    else if (arg.startsWith("--role=")) picked.push(...arg.slice("--role=".length).split(","));
  });
  if (picked.length === 0) return [...ROLES];
  for (const role of picked) {
    if (!(ROLES as readonly string[]).includes(role)) {
      throw new Error(`Unknown role '${role}'; use one of ${ROLES.join(", ")}`);
    }
  }
  return [...new Set(picked)] as Role[];
}
