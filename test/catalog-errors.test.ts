import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

const auth = (value: string) => ({ authorization: value });

interface Parents {
  brandId: number;
  programId: number;
  accountId: number;
}

const PATHS = ["brands", "programs", "accounts", "links", "traffic-sources", "trackers"] as const;
const TABLE: Record<(typeof PATHS)[number], string> = {
  brands: "brands",
  programs: "programs",
  accounts: "accounts",
  links: "links",
  "traffic-sources": "traffic_sources",
  trackers: "trackers",
};
const MISSING = 987_654_321;

describe("catalog validation and conflicts", () => {
  let t: TestApp;
  let who: Tenancy;
  let p: Parents;
  /** Parents in another tenant: never to be referenced by `who`. */
  let q: Parents;
  /** One row of each resource in `who`'s tenant. */
  const items: Record<string, number> = {};

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 100_000 } } });
    who = await seedTenancy(t, { key: { scopes: ["traffic-sources.delete"] } });
    const other = await seedTenancy(t);
    p = await parents(who);
    q = await parents(other);
    items.brands = p.brandId;
    items.programs = p.programId;
    items.accounts = p.accountId;
    items.links = await create(who, "links", {
      name: "Link",
      accountId: p.accountId,
      brandId: p.brandId,
      url: LANDING,
    });
    items["traffic-sources"] = await create(who, "traffic-sources", { name: "Source" });
    items.trackers = await create(who, "trackers", { name: "Tracker" });
  });
  afterAll(() => t.close());

  const LANDING = "https://brand.example/";
  const call = (method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: object) =>
    t.call({ method, url: `/api/v1/${url}`, headers: auth(who.apiKey), ...(payload ? { payload } : {}) });

  async function create(owner: Tenancy, path: string, payload: object): Promise<number> {
    const res = await t.call({ method: "POST", url: `/api/v1/${path}`, headers: auth(owner.apiKey), payload });
    if (res.statusCode !== 201) throw new Error(`POST ${path} answered ${res.statusCode}: ${res.body}`);
    return res.json().data.id;
  }

  async function parents(owner: Tenancy): Promise<Parents> {
    const brandId = await create(owner, "brands", { name: "Parent brand" });
    const programId = await create(owner, "programs", { name: "Parent program", brandIds: [brandId] });
    const accountId = await create(owner, "accounts", { name: "Parent account", programId });
    return { brandId, programId, accountId };
  }

  async function count(path: (typeof PATHS)[number]): Promise<number> {
    const [row] = await t.ctx.db.query<{ n: number }>(`select count(*)::int as n from ${TABLE[path]}`);
    return row?.n ?? -1;
  }

  const expectFieldError = (res: Awaited<ReturnType<typeof call>>, field: string) => {
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe("validation_error");
    expect(res.json().message.startsWith(`${field} `)).toBe(true);
    expect(res.json().data.errors[0].path).toBe(field);
  };

  describe("create", () => {
    const link = (over: object) => ({ name: "L", accountId: p.accountId, brandId: p.brandId, url: LANDING, ...over });
    it.each<[(typeof PATHS)[number], string, () => object]>([
      ["brands", "name", () => ({})],
      ["brands", "colour", () => ({ name: "B", colour: "red" })],
      ["brands", "name", () => ({ name: "   " })],
      ["brands", "name", () => ({ name: "" })],
      ["brands", "name", () => ({ name: "x".repeat(201) })],
      ["programs", "name", () => ({ brandIds: [] })],
      ["programs", "brandIds", () => ({ name: "P", brandIds: [MISSING] })],
      ["programs", "brandIds", () => ({ name: "P", brandIds: [p.brandId, q.brandId] })],
      ["programs", "brandIds", () => ({ name: "P", brandIds: [p.brandId, p.brandId] })],
      ["programs", "brandIds[0]", () => ({ name: "P", brandIds: ["one"] })],
      ["accounts", "programId", () => ({ name: "A" })],
      ["accounts", "programId", () => ({ name: "A", programId: q.programId })],
      ["accounts", "programId", () => ({ name: "A", programId: MISSING })],
      ["accounts", "status", () => ({ name: "A", programId: p.programId, status: "paused" })],
      ["accounts", "name", () => ({ name: "\t", programId: p.programId })],
      ["links", "url", () => ({ name: "L", accountId: p.accountId, brandId: p.brandId })],
      ["links", "brandId", () => ({ name: "L", accountId: p.accountId, url: LANDING })],
      ["links", "url", () => link({ url: "ftp://brand.example/" })],
      ["links", "url", () => link({ url: "javascript:alert(1)" })],
      ["links", "url", () => link({ url: "/relative/path" })],
      ["links", "url", () => link({ url: "brand.example" })],
      ["links", "accountId", () => link({ accountId: q.accountId })],
      ["links", "accountId", () => link({ accountId: MISSING })],
      ["links", "brandId", () => link({ brandId: q.brandId })],
      ["links", "brandId", () => link({ brandId: MISSING })],
      ["links", "trafficSourceId", () => link({ trafficSourceId: 1 })],
      ["traffic-sources", "url", () => ({ name: "S", url: "mailto:ads@example.com" })],
      ["traffic-sources", "url", () => ({ name: "S", url: "" })],
      ["trackers", "name", () => ({ name: "abc" })],
      ["trackers", "name", () => ({ name: "  abc  " })],
      ["trackers", "name", () => ({ name: "x".repeat(51) })],
      ["trackers", "name", () => ({})],
      ["trackers", "name", () => ({ name: "98765" })],
      ["trackers", "name", () => ({ name: " 1234 " })],
    ])("POST /%s refuses case %# naming %s, storing nothing", async (path, field, body) => {
      const before = await count(path);
      expectFieldError(await call("POST", path, body()), field);
      expect(await count(path)).toBe(before);
    });

    it("names the reference that does not exist", async () => {
      const res = await call("POST", "programs", { name: "P", brandIds: [p.brandId, q.brandId] });
      expect(res.json().message).toBe(`brandIds Brand ${q.brandId} does not exist`);
    });

    it("accepts tracker names of exactly 4 and 50 characters", async () => {
      expect((await call("POST", "trackers", { name: "abcd" })).statusCode).toBe(201);
      expect((await call("POST", "trackers", { name: "y".repeat(50) })).statusCode).toBe(201);
    });
  });

  describe("PATCH", () => {
    it.each(PATHS)("/%s refuses an empty body", async (path) => {
      const res = await call("PATCH", `${path}/${items[path]}`, {});
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe("validation_error");
    });

    it.each<[(typeof PATHS)[number], string, () => object]>([
      ["brands", "name", () => ({ name: "  " })],
      ["brands", "name", () => ({ name: null })],
      ["brands", "id", () => ({ id: 5 })],
      ["programs", "brandIds", () => ({ brandIds: [q.brandId] })],
      ["accounts", "programId", () => ({ programId: q.programId })],
      ["accounts", "status", () => ({ status: "deleted" })],
      ["trackers", "name", () => ({ name: "20261122" })],
      ["accounts", "createdAt", () => ({ createdAt: "2020-01-01T00:00:00Z" })],
      ["links", "url", () => ({ url: "ws://brand.example/" })],
      ["links", "url", () => ({ url: null })],
      ["links", "accountId", () => ({ accountId: q.accountId })],
      ["links", "brandId", () => ({ brandId: MISSING })],
      ["traffic-sources", "url", () => ({ url: "not a url" })],
      ["trackers", "name", () => ({ name: "ab" })],
      ["trackers", "name", () => ({ name: "z".repeat(51) })],
    ])("/%s refuses case %# naming %s, changing nothing", async (path, field, body) => {
      const before = (await call("GET", `${path}/${items[path]}`)).json().data;
      expectFieldError(await call("PATCH", `${path}/${items[path]}`, body()), field);
      expect((await call("GET", `${path}/${items[path]}`)).json().data).toEqual(before);
    });

    it("clears a nullable field with null", async () => {
      const id = await create(who, "traffic-sources", { name: "With url", url: "https://ads.example/" });
      const res = await call("PATCH", `traffic-sources/${id}`, { url: null });
      expect(res.json().data).toMatchObject({ name: "With url", url: null });
      const account = await call("PATCH", `accounts/${p.accountId}`, { username: null });
      expect(account.json().data.username).toBeNull();
    });
  });

  describe("tracker names are unique regardless of case", () => {
    it("refuses a duplicate on create and on rename with 409, not in another tenant", async () => {
      const first = await create(who, "trackers", { name: "Summer Sale" });
      const before = await count("trackers");
      for (const name of ["SUMMER SALE", "summer sale", "  Summer Sale  "]) {
        const res = await call("POST", "trackers", { name });
        expect(res.statusCode).toBe(409);
        expect(res.json().code).toBe("conflict");
        expect(res.json().message).toContain(`'${name}'`);
      }
      expect(await count("trackers")).toBe(before);

      const second = await create(who, "trackers", { name: "Winter Sale" });
      const rename = await call("PATCH", `trackers/${second}`, { name: "summer SALE" });
      expect(rename.statusCode).toBe(409);
      expect((await call("GET", `trackers/${second}`)).json().data.name).toBe("Winter Sale");
      // A tracker may change the case of its own name.
      const recase = await call("PATCH", `trackers/${first}`, { name: "SUMMER sale" });
      expect(recase.statusCode).toBe(200);
      expect(recase.json().data.name).toBe("SUMMER sale");

      const elsewhere = await seedTenancy(t);
      expect((await create(elsewhere, "trackers", { name: "Summer Sale" })) > 0).toBe(true);

      const audited = await t.ctx.db.query<{ action: string }>(
        "select action from audit_log where tenant_id = $1 and subject_type = 'tracker' and subject_id = any($2)",
        [who.tenantId, [String(first), String(second)]],
      );
      expect(audited.map((r) => r.action).sort()).toEqual(["tracker.created", "tracker.created", "tracker.updated"]);
    });
  });

  describe("deleting what is still used", () => {
    it("refuses with 409 while programs, accounts or links use it; allows once they are gone", async () => {
      const brand = await create(who, "brands", { name: "Used brand" });
      const linkOnlyBrand = await create(who, "brands", { name: "Brand used by a link only" });
      const program = await create(who, "programs", { name: "Used program", brandIds: [brand] });
      const account = await create(who, "accounts", { name: "Used account", programId: program });
      const link = await create(who, "links", {
        name: "User",
        accountId: account,
        brandId: linkOnlyBrand,
        url: LANDING,
      });

      const refused: [string, RegExp][] = [
        [`brands/${brand}`, /programs/],
        [`brands/${linkOnlyBrand}`, /brand links/],
        [`programs/${program}`, /accounts/],
        [`accounts/${account}`, /brand links/],
      ];
      for (const [url, what] of refused) {
        const res = await call("DELETE", url);
        expect(res.statusCode).toBe(409);
        expect(res.json().code).toBe("conflict");
        expect(res.json().message).toMatch(what);
        expect((await call("GET", url)).statusCode).toBe(200);
      }

      for (const url of [`links/${link}`, `accounts/${account}`, `programs/${program}`, `brands/${linkOnlyBrand}`]) {
        expect((await call("DELETE", url)).statusCode).toBe(200);
      }
      // Unhooked from its last program, the brand can go too.
      const other = await create(who, "programs", { name: "Holder", brandIds: [brand] });
      expect((await call("DELETE", `brands/${brand}`)).statusCode).toBe(409);
      expect((await call("PATCH", `programs/${other}`, { brandIds: [] })).statusCode).toBe(200);
      expect((await call("DELETE", `brands/${brand}`)).statusCode).toBe(200);

      const deletes = await t.ctx.db.query<{ subject_id: string }>(
        "select subject_id from audit_log where tenant_id = $1 and action like '%.deleted' and subject_id = any($2)",
        [who.tenantId, [brand, linkOnlyBrand, program, account, link].map(String)],
      );
      expect(deletes).toHaveLength(5);
    });
  });

  // Two nodes on one PostgreSQL: the reference check must wait for a delete in flight.
  it.runIf(inject("dbKind") === "postgres")(
    "refuses a program naming a brand that another node is deleting, once that delete commits",
    async () => {
      const brand = await create(who, "brands", { name: "Brand being deleted" });
      const node = t.testDb.openAnother();
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let deleted = () => {};
      const deletedInTx = new Promise<void>((resolve) => {
        deleted = resolve;
      });
      const deleting = node.transaction(async (tx) => {
        await tx.query("select 1 from brands where id = $1 for update", [brand]);
        await tx.query("delete from brands where id = $1", [brand]);
        deleted();
        await held;
      });
      await deletedInTx;
      const creating = call("POST", "programs", { name: "Racing program", brandIds: [brand] });
      await new Promise((resolve) => setTimeout(resolve, 300));
      release();
      await deleting;
      expectFieldError(await creating, "brandIds");
      const dangling = await t.ctx.db.query("select 1 from programs where $1 = any(brand_ids)", [brand]);
      expect(dangling).toEqual([]);
    },
  );

  describe("ids", () => {
    it.each(PATHS.flatMap((path) => ["abc", "1.5", "0", "-3", "1e3x", "99999999999999999999"].map((id) => [path, id])))(
      "/%s/%s is 400 naming id on get, patch and delete",
      async (path, id) => {
        for (const method of ["GET", "PATCH", "DELETE"] as const) {
          const res = await call(method, `${path}/${id}`, method === "PATCH" ? { name: "Whatever name" } : undefined);
          expectFieldError(res, "id");
        }
      },
    );

    it.each(PATHS)("/%s answers 404 for an id that does not exist", async (path) => {
      for (const method of ["GET", "PATCH", "DELETE"] as const) {
        const res = await call(
          method,
          `${path}/${MISSING}`,
          method === "PATCH" ? { name: "Whatever name" } : undefined,
        );
        expect(res.statusCode).toBe(404);
        expect(res.json()).toMatchObject({ code: "not_found", data: null });
        expect(res.json().message).toContain(`'${MISSING}'`);
      }
    });
  });
});
