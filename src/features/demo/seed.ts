import { randomBytes } from "node:crypto";
import type { AppContext } from "../../context.js";
import { createApiToken } from "../api-tokens/index.js";
import { createTenant, createUser } from "../tenants/index.js";
import { seedDemoRates } from "./rates.js";

export const DEMO_TENANT = "Demo Tenant";
export const DEMO_EMAIL = "demo@example.com";

export interface DemoCredentials {
  tenantId: string;
  email: string;
  password: string;
  apiKey: string;
  legacyApiKey: string;
  postbackKey: string;
}

/**
 * Creates the demo tenant, its admin, a demo key and its exchange rates on first start; returns their secrets,
 * which exist nowhere else, or null when the demo tenant is already there.
 */
export async function seedDemo(ctx: Pick<AppContext, "db" | "clock">): Promise<DemoCredentials | null> {
  return ctx.db.transaction(async (tx) => {
    // Serialises two nodes seeding at once; the second finds the tenant.
    await tx.query("select pg_advisory_xact_lock(7201005)");
    const existing = await tx.query("select 1 from tenants where name = $1", [DEMO_TENANT]);
    if (existing.length > 0) return null;
    const now = ctx.clock.now();
    const system = { type: "system", name: "demo seed" } as const;
    const tenant = await createTenant(tx, { name: DEMO_TENANT }, system, now);
    const password = randomBytes(12).toString("base64url");
    const user = await createUser(
      tx,
      tenant.id,
      {
        email: DEMO_EMAIL,
        password,
        name: "Demo Admin",
        permissions: ["account.admin", "traffic-sources.delete", "reports.update"],
      },
      system,
      now,
    );
    const creator = { type: "user", id: user.id, name: user.name } as const;
    const key = await createApiToken(tx, tenant.id, { name: "Demo key", scopes: ["reports.read"] }, creator, now);
    const legacy = await createApiToken(tx, tenant.id, { name: "Demo legacy key" }, creator, now);
    // Its own USD, GBP, SEK and JPY rates per EUR over the last 400 days: reports convert without the ECB's.
    await seedDemoRates(tx, tenant.id, now);
    return {
      tenantId: tenant.id,
      email: DEMO_EMAIL,
      password,
      apiKey: key.token,
      legacyApiKey: legacy.token,
      postbackKey: tenant.postbackKey,
    };
  });
}
