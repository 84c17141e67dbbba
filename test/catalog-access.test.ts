import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

const auth = (value: string) => ({ authorization: value });

const PATHS = ["brands", "programs", "accounts", "links", "traffic-sources", "trackers"] as const;
type Path = (typeof PATHS)[number];
type Method = "GET" | "POST" | "PATCH" | "DELETE";

/** A valid create body for each resource, given the parents in the same tenant. */
const BODIES: Record<Path, (ids: Record<Path, number>) => object> = {
  brands: () => ({ name: "Brand" }),
  programs: (ids) => ({ name: "Program", brandIds: [ids.brands] }),
  accounts: (ids) => ({ name: "Account", programId: ids.programs }),
  links: (ids) => ({ name: "Link", accountId: ids.accounts, brandId: ids.brands, url: "https://brand.example/" }),
  "traffic-sources": () => ({ name: "Source" }),
  trackers: () => ({ name: "Tracker" }),
};

/** Every route of every resource, with a body the route would accept. */
const ROUTES: [Method, Path, "list" | "one"][] = PATHS.flatMap((path) => [
  ["GET", path, "list"] as const,
  ["GET", path, "one"] as const,
  ["POST", path, "list"] as const,
  ["PATCH", path, "one"] as const,
  ["DELETE", path, "one"] as const,
]);

describe("catalog access", () => {
  let t: TestApp;
  /** Signed-in person holding catalog.read only; the tenant's API key creates the rows. */
  let reader: Tenancy;
  const ids = {} as Record<Path, number>;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 100_000 } } });
    reader = await seedTenancy(t, { permissions: ["catalog.read"] });
    for (const path of PATHS) ids[path] = await create(reader, path, BODIES[path](ids));
  });
  afterAll(() => t.close());

  async function create(who: Tenancy, path: Path, payload: object): Promise<number> {
    const res = await t.call({ method: "POST", url: `/api/v1/${path}`, headers: auth(who.apiKey), payload });
    if (res.statusCode !== 201) throw new Error(`POST ${path} answered ${res.statusCode}: ${res.body}`);
    return res.json().data.id;
  }

  function request(method: Method, path: Path, shape: "list" | "one", credential?: string, id = ids[path]) {
    const url = shape === "list" ? `/api/v1/${path}` : `/api/v1/${path}/${id}`;
    const payload = method === "POST" ? BODIES[path](ids) : method === "PATCH" ? { name: "Patched name" } : undefined;
    return t.call({
      method,
      url,
      ...(credential ? { headers: auth(credential) } : {}),
      ...(payload ? { payload } : {}),
    });
  }

  it.each(ROUTES)(
    "%s /%s (%s) is 401 without a valid credential, even with a bad body",
    async (method, path, shape) => {
      const url = shape === "list" ? `/api/v1/${path}` : `/api/v1/${path}/not-a-number`;
      const payload = method === "POST" || method === "PATCH" ? { bogus: true } : undefined;
      for (const headers of [{}, auth("Bearer not.a.jwt"), auth("ApiKey not-a-real-key")]) {
        const res = await t.call({ method, url, headers, ...(payload ? { payload } : {}) });
        expect(res.statusCode).toBe(401);
        expect(res.json()).toMatchObject({ code: "unauthorized", data: null });
      }
    },
  );

  describe("a person with catalog.read only", () => {
    it.each(PATHS)("reads /%s", async (path) => {
      const list = await request("GET", path, "list", reader.bearer);
      expect(list.statusCode).toBe(200);
      expect(list.json().data.map((x: { id: number }) => x.id)).toEqual([ids[path]]);
      expect((await request("GET", path, "one", reader.bearer)).json().data.id).toBe(ids[path]);
    });

    it.each(ROUTES.filter(([method]) => method !== "GET"))(
      "%s /%s (%s) is 403 naming the missing permission, changing nothing",
      async (method, path, shape) => {
        const before = await t.ctx.db.query("select count(*)::int as n from audit_log where tenant_id = $1", [
          reader.tenantId,
        ]);
        const res = await request(method, path, shape, reader.bearer);
        expect(res.statusCode).toBe(403);
        expect(res.json().code).toBe("forbidden");
        const permission =
          method === "DELETE" && path === "traffic-sources" ? "traffic-sources.delete" : "catalog.update";
        expect(res.json().message).toBe(`Missing permission '${permission}'`);
        const after = await t.ctx.db.query("select count(*)::int as n from audit_log where tenant_id = $1", [
          reader.tenantId,
        ]);
        expect(after).toEqual(before);
        expect((await request("GET", path, "one", reader.apiKey)).statusCode).toBe(200);
      },
    );

    it("is refused (403) before the id is looked up or the body validated", async () => {
      const res = await t.call({
        method: "PATCH",
        url: "/api/v1/brands/987654321",
        headers: auth(reader.bearer),
        payload: { nope: 1 },
      });
      expect(res.statusCode).toBe(403);
    });
  });

  it.each(ROUTES.filter(([method]) => method === "GET"))(
    "%s /%s (%s) is 403 for a person without catalog.read",
    async (method, path, shape) => {
      const reporter = await seedTenancy(t, { permissions: ["reports.read", "catalog.update"] });
      const res = await request(method, path, shape, reporter.bearer);
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toBe("Missing permission 'catalog.read'");
    },
  );

  it("lets a person with catalog.update (not an admin) change the catalog, audited under their name", async () => {
    const editor = await seedTenancy(t, { permissions: ["catalog.read", "catalog.update"] });
    const res = await t.call({
      method: "POST",
      url: "/api/v1/brands",
      headers: auth(editor.bearer),
      payload: { name: "Editor's brand" },
    });
    expect(res.statusCode).toBe(201);
    const [row] = await t.ctx.db.query<Record<string, unknown>>(
      "select actor_type, actor_id, action, subject_type, details from audit_log where tenant_id = $1 and subject_id = $2",
      [editor.tenantId, String(res.json().data.id)],
    );
    expect(row).toEqual({
      actor_type: "user",
      actor_id: editor.userId,
      action: "brand.created",
      subject_type: "brand",
      details: { name: "Editor's brand" },
    });
  });

  describe("deleting a traffic source needs traffic-sources.delete", () => {
    it("refuses an account admin without it, by bearer and by a key without the scope", async () => {
      const admin = await seedTenancy(t);
      const id = await create(admin, "traffic-sources", { name: "Kept" });
      for (const credential of [admin.bearer, admin.apiKey]) {
        const res = await request("DELETE", "traffic-sources", "one", credential, id);
        expect(res.statusCode).toBe(403);
        expect(res.json().message).toBe("Missing permission 'traffic-sources.delete'");
      }
      // The rest of the catalog is the admin's to delete.
      const brand = await create(admin, "brands", { name: "Gone" });
      expect((await request("DELETE", "brands", "one", admin.bearer, brand)).statusCode).toBe(200);
      expect((await request("GET", "traffic-sources", "one", admin.bearer, id)).statusCode).toBe(200);
    });

    it("lets a person granted it and a key scoped with it delete, audited", async () => {
      const granted = await seedTenancy(t, {
        permissions: ["account.admin", "traffic-sources.delete"],
        key: { scopes: ["traffic-sources.delete"] },
      });
      for (const credential of [granted.bearer, granted.apiKey]) {
        const id = await create(granted, "traffic-sources", { name: "Doomed" });
        const res = await request("DELETE", "traffic-sources", "one", credential, id);
        expect(res.statusCode).toBe(200);
        expect(res.json().data).toEqual({ id, deleted: true });
        expect((await request("GET", "traffic-sources", "one", credential, id)).statusCode).toBe(404);
      }
      const audit = await t.call({
        method: "GET",
        url: "/api/v1/audit-log?action=traffic_source.deleted",
        headers: auth(granted.bearer),
      });
      expect(
        audit
          .json()
          .data.map((r: { actor: { type: string } }) => r.actor.type)
          .sort(),
      ).toEqual(["api_key", "user"]);
    });
  });

  describe("another tenant's rows", () => {
    let stranger: Tenancy;

    beforeAll(async () => {
      stranger = await seedTenancy(t, {
        permissions: ["account.admin", "traffic-sources.delete"],
        key: { scopes: ["traffic-sources.delete"] },
      });
    });

    it.each(ROUTES.filter(([, , shape]) => shape === "one"))(
      "%s /%s/{id} is 404, changing nothing",
      async (method, path, shape) => {
        for (const credential of [stranger.bearer, stranger.apiKey]) {
          const res = await request(method, path, shape, credential);
          expect(res.statusCode).toBe(404);
          expect(res.json()).toMatchObject({ code: "not_found", data: null });
        }
        const mine = await request("GET", path, "one", reader.bearer);
        expect(mine.statusCode).toBe(200);
        expect(mine.json().data.name).not.toBe("Patched name");
        const audited = await t.ctx.db.query(
          "select action from audit_log where actor_id = any($1) and subject_type = any($2)",
          [
            [stranger.userId, stranger.apiKeyId],
            ["brand", "program", "account", "link", "traffic_source", "tracker"],
          ],
        );
        expect(audited).toEqual([]);
      },
    );
  });
});
