import { randomBytes, scrypt } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, createUser } from "../src/features/tenants/index.js";
import { hashPassword, PASSWORD_SCRYPT, passwordNeedsRehash, verifyPassword } from "../src/platform/crypto.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

const SYSTEM = { type: "system", name: "test" } as const;
const CURRENT_PREFIX = "scrypt$131072$8$1$";

/** A hash as the service wrote them before (N=2^15), made here with node:crypto directly. */
function legacyHash(password: string): Promise<string> {
  const salt = randomBytes(16);
  return new Promise((resolve, reject) => {
    scrypt(password, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }, (error, hash) => {
      if (error) reject(error);
      else resolve(`scrypt$32768$8$1$${salt.toString("base64")}$${hash.toString("base64")}`);
    });
  });
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function storedHash(userId: string): Promise<string> {
  const [row] = await t.ctx.db.query<{ password_hash: string }>("select password_hash from users where id = $1", [
    userId,
  ]);
  if (!row) throw new Error(`no user ${userId}`);
  return row.password_hash;
}

async function personWithHash(hash: string | null): Promise<{ id: string; email: string; password: string }> {
  const now = t.clock.now();
  const tenant = await createTenant(t.ctx.db, { name: `Hashing ${randomBytes(4).toString("hex")}` }, SYSTEM, now);
  const email = `hash-${randomBytes(6).toString("hex")}@example.com`;
  const password = `pw-${randomBytes(12).toString("base64")}`;
  const user = await createUser(
    t.ctx.db,
    tenant.id,
    { email, password, name: "Hashed", permissions: ["account.admin"] },
    SYSTEM,
    now,
  );
  if (hash !== null) {
    await t.ctx.db.query("update users set password_hash = $2 where id = $1", [user.id, await legacyHash(password)]);
  }
  return { id: user.id, email, password };
}

const signIn = (email: string, password: string) =>
  t.call({ method: "POST", url: "/api/v1/auth", payload: { email, password } });

describe("password hashing", () => {
  it("hashes with scrypt N=2^17, r=8, p=1 and stores the parameters with the hash", async () => {
    expect(PASSWORD_SCRYPT).toMatchObject({ N: 2 ** 17, r: 8, p: 1 });
    const started = performance.now();
    const hash = await hashPassword("correct horse battery");
    const elapsedMs = performance.now() - started;
    expect(hash.startsWith(CURRENT_PREFIX)).toBe(true);
    expect(await verifyPassword("correct horse battery", hash)).toBe(true);
    expect(await verifyPassword("correct horse batterx", hash)).toBe(false);
    expect(passwordNeedsRehash(hash)).toBe(false);
    // Measured, not asserted tightly: a few hundred ms on one core, more on a busy machine.
    console.info(`scrypt N=2^17 hash: ${Math.round(elapsedMs)} ms`);
    expect(elapsedMs).toBeGreaterThan(20);
  });

  it("stays off the event loop: timers keep firing while hashes run", async () => {
    let ticks = 0;
    const timer = setInterval(() => {
      ticks += 1;
    }, 5);
    try {
      await Promise.all([hashPassword("one password"), hashPassword("another password")]);
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(5);
  });

  it("still verifies hashes made with the old parameters, and flags them for a rehash", async () => {
    const old = await legacyHash("an old password");
    expect(old.startsWith("scrypt$32768$8$1$")).toBe(true);
    expect(await verifyPassword("an old password", old)).toBe(true);
    expect(await verifyPassword("another password", old)).toBe(false);
    expect(passwordNeedsRehash(old)).toBe(true);
  });

  it("refuses stored parameters out of bounds instead of running them", async () => {
    const good = await legacyHash("bounded");
    const [, , r, p, salt, hash] = good.split("$");
    for (const bad of [
      `scrypt$${2 ** 24}$${r}$${p}$${salt}$${hash}`, // 16 GiB of memory
      `scrypt$1000$${r}$${p}$${salt}$${hash}`, // not a power of two
      `scrypt$32768$64$${p}$${salt}$${hash}`,
      `scrypt$32768$${r}$99$${salt}$${hash}`,
      `bcrypt$32768$${r}$${p}$${salt}$${hash}`,
      `scrypt$32768$${r}$${p}$${salt}`,
    ]) {
      expect(await verifyPassword("bounded", bad)).toBe(false);
    }
  });

  it("a person with an old-parameter hash signs in, and the stored hash then has the new parameters", async () => {
    const person = await personWithHash("legacy");
    const before = await storedHash(person.id);
    expect(before.startsWith("scrypt$32768$8$1$")).toBe(true);

    // A wrong password changes nothing.
    expect((await signIn(person.email, `${person.password}x`)).statusCode).toBe(401);
    expect(await storedHash(person.id)).toBe(before);

    const first = await signIn(person.email, person.password);
    expect(first.statusCode, first.body).toBe(200);
    const after = await storedHash(person.id);
    expect(after.startsWith(CURRENT_PREFIX)).toBe(true);
    expect(after).not.toBe(before);
    expect(await verifyPassword(person.password, after)).toBe(true);

    // The upgraded hash signs in, and is left as it is.
    const second = await signIn(person.email, person.password);
    expect(second.statusCode, second.body).toBe(200);
    expect(await storedHash(person.id)).toBe(after);
  });

  it("creates new people with the current parameters", async () => {
    const person = await personWithHash(null);
    expect((await storedHash(person.id)).startsWith(CURRENT_PREFIX)).toBe(true);
  });
});
