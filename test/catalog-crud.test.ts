import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

const auth = (value: string) => ({ authorization: value });

/** Brand, program and account every other catalog row can point at. */
interface Parents {
  brandId: number;
  programId: number;
  accountId: number;
}

interface ResourceCase {
  path: string;
  /** Prefix of the audit actions (`brand.created`). */
  audit: string;
  create: (name: string, p: Parents) => Record<string, unknown>;
  /** Fields the stored record shows beyond the create body. */
  defaults: Record<string, unknown>;
  patch: (p: Parents) => Record<string, unknown>;
}

const CASES: ResourceCase[] = [
  {
    path: "brands",
    audit: "brand",
    create: (name) => ({ name }),
    defaults: {},
    patch: () => ({ name: "Renamed brand" }),
  },
  {
    path: "programs",
    audit: "program",
    create: (name, p) => ({ name, brandIds: [p.brandId] }),
    defaults: {},
    patch: () => ({ brandIds: [] }),
  },
  {
    path: "accounts",
    audit: "account",
    create: (name, p) => ({ name, programId: p.programId }),
    defaults: { username: null, status: "active" },
    patch: () => ({ status: "inactive", username: "aff-007" }),
  },
  {
    path: "links",
    audit: "link",
    create: (name, p) => ({
      name,
      accountId: p.accountId,
      brandId: p.brandId,
      url: "https://brand.example/land?c={clickId}",
    }),
    defaults: { warnings: [], names: { account: "Parent account", brand: "Parent brand" } },
    // {clickId} in any case is filled, so no warning either.
    patch: () => ({ url: "http://brand.example/other?c={CLICKID}" }),
  },
  {
    path: "traffic-sources",
    audit: "traffic_source",
    create: (name) => ({ name }),
    defaults: { url: null, clickIdParam: null, clickIdMacro: null, postback: null },
    patch: () => ({ url: "https://ads.example/campaign" }),
  },
  {
    path: "trackers",
    audit: "tracker",
    create: (name) => ({ name }),
    defaults: {},
    patch: () => ({ name: "Renamed tracker" }),
  },
];

describe("catalog CRUD", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 100_000 } } });
  });
  afterAll(() => t.close());

  const post = (who: Tenancy, path: string, payload: object) =>
    t.call({ method: "POST", url: `/api/v1/${path}`, headers: auth(who.apiKey), payload });
  const get = (who: Tenancy, url: string) =>
    t.call({ method: "GET", url: `/api/v1/${url}`, headers: auth(who.apiKey) });

  async function create(who: Tenancy, path: string, payload: object): Promise<number> {
    const res = await post(who, path, payload);
    if (res.statusCode !== 201) throw new Error(`POST ${path} answered ${res.statusCode}: ${res.body}`);
    return res.json().data.id;
  }

  async function parents(who: Tenancy): Promise<Parents> {
    const brandId = await create(who, "brands", { name: "Parent brand" });
    const programId = await create(who, "programs", { name: "Parent program", brandIds: [brandId] });
    const accountId = await create(who, "accounts", { name: "Parent account", programId });
    return { brandId, programId, accountId };
  }

  async function auditActions(who: Tenancy, id: number): Promise<{ action: string; actor_id: string }[]> {
    return t.ctx.db.query<{ action: string; actor_id: string }>(
      "select action, actor_id from audit_log where tenant_id = $1 and subject_id = $2 order by at",
      [who.tenantId, String(id)],
    );
  }

  describe.each(CASES)("/api/v1/$path", (c) => {
    let who: Tenancy;
    let p: Parents;

    beforeAll(async () => {
      // The key may delete traffic sources too (account.admin alone does not imply it).
      who = await seedTenancy(t, { key: { scopes: ["traffic-sources.delete"] } });
      p = await parents(who);
    });

    it("creates (201, envelope), reads, patches only the given fields, deletes; each change audited", async () => {
      const body = c.create("  Lifecycle one  ", p);
      const created = await post(who, c.path, body);
      expect(created.statusCode).toBe(201);
      const item = created.json().data;
      expect(created.json()).toMatchObject({ code: "ok", message: "Created" });
      // Names are stored trimmed.
      expect(item).toEqual({
        ...body,
        ...c.defaults,
        name: "Lifecycle one",
        id: expect.any(Number),
        createdAt: t.clock.now().toISOString(),
        updatedAt: t.clock.now().toISOString(),
      });
      expect(item.id).toBeGreaterThan(0);

      const one = await get(who, `${c.path}/${item.id}`);
      expect(one.statusCode).toBe(200);
      expect(one.json()).toEqual({ code: "ok", message: "OK", data: item });

      t.clock.advance(60_000);
      const change = c.patch(p);
      const patched = await t.call({
        method: "PATCH",
        url: `/api/v1/${c.path}/${item.id}`,
        headers: auth(who.apiKey),
        payload: change,
      });
      expect(patched.statusCode).toBe(200);
      const after = { ...item, ...change, updatedAt: t.clock.now().toISOString() };
      expect(patched.json()).toMatchObject({ code: "ok", data: after });
      expect((await get(who, `${c.path}/${item.id}`)).json().data).toEqual(after);

      t.clock.advance(60_000);
      const removed = await t.call({
        method: "DELETE",
        url: `/api/v1/${c.path}/${item.id}`,
        headers: auth(who.apiKey),
      });
      expect(removed.statusCode).toBe(200);
      expect(removed.json()).toEqual({ code: "ok", message: "Deleted", data: { id: item.id, deleted: true } });
      expect((await get(who, `${c.path}/${item.id}`)).statusCode).toBe(404);
      const again = await t.call({ method: "DELETE", url: `/api/v1/${c.path}/${item.id}`, headers: auth(who.apiKey) });
      expect(again.statusCode).toBe(404);

      expect(await auditActions(who, item.id)).toEqual([
        { action: `${c.audit}.created`, actor_id: who.apiKeyId },
        { action: `${c.audit}.updated`, actor_id: who.apiKeyId },
        { action: `${c.audit}.deleted`, actor_id: who.apiKeyId },
      ]);
    });

    it("pages oldest first; pagination.total counts the whole filtered set", async () => {
      const before = (await get(who, `${c.path}?limit=1`)).json().pagination?.total ?? 0;
      const ids: number[] = [];
      for (let i = 1; i <= 5; i++) ids.push(await create(who, c.path, c.create(`Paged item ${i}`, p)));
      const total = before + 5;

      const all = await get(who, `${c.path}?limit=500`);
      expect(all.json().pagination).toEqual({ offset: 0, limit: 500, total });
      const allIds = all.json().data.map((x: { id: number }) => x.id);
      expect(allIds).toEqual([...allIds].sort((a, b) => a - b));
      expect(allIds.slice(-5)).toEqual(ids);

      const page = await get(who, `${c.path}?offset=${before + 1}&limit=2`);
      expect(page.json().pagination).toEqual({ offset: before + 1, limit: 2, total });
      expect(page.json().data.map((x: { id: number }) => x.id)).toEqual(ids.slice(1, 3));

      const beyond = await get(who, `${c.path}?offset=${total}`);
      expect(beyond.json()).toMatchObject({ code: "ok", data: [], pagination: { offset: total, limit: 50, total } });

      const defaults = await get(who, c.path);
      expect(defaults.json().pagination).toEqual({ offset: 0, limit: 50, total });

      const searched = await get(who, `${c.path}?search=PAGED%20item&offset=1&limit=2`);
      expect(searched.json().pagination).toEqual({ offset: 1, limit: 2, total: 5 });
      expect(searched.json().data.map((x: { id: number }) => x.id)).toEqual(ids.slice(1, 3));
    });

    describe("search", () => {
      let mine: Tenancy;

      beforeAll(async () => {
        mine = await seedTenancy(t);
        const q = await parents(mine);
        for (const name of [
          "Alpha 100% Off",
          "alpha 100 off",
          "Beta a_b",
          "Beta axb",
          "Gamma back\\slash",
          "Crème Éclair",
        ]) {
          await create(mine, c.path, c.create(name, q));
        }
      });

      it.each([
        ["ALPHA", ["Alpha 100% Off", "alpha 100 off"]],
        ["pha 100", ["Alpha 100% Off", "alpha 100 off"]],
        ["100%", ["Alpha 100% Off"]],
        ["%", ["Alpha 100% Off"]],
        ["a_b", ["Beta a_b"]],
        ["_", ["Beta a_b"]],
        ["\\", ["Gamma back\\slash"]],
        ["  gamma  ", ["Gamma back\\slash"]],
        ["CRÈME éCLAIR", ["Crème Éclair"]],
        ["no such thing", []],
      ])("search=%j matches names containing it, case-insensitive, wildcards literal", async (search, names) => {
        const res = await get(mine, `${c.path}?search=${encodeURIComponent(search)}`);
        expect(res.statusCode).toBe(200);
        expect(res.json().data.map((x: { name: string }) => x.name)).toEqual(names);
        expect(res.json().pagination?.total).toBe(names.length);
      });
    });

    it("lists only the caller's tenant", async () => {
      const other = await seedTenancy(t);
      const q = await parents(other);
      await create(other, c.path, c.create("Paged item of another tenant", q));
      const res = await get(who, `${c.path}?search=another%20tenant`);
      expect(res.json()).toMatchObject({ data: [], pagination: { total: 0 } });
    });

    it.each([
      ["limit=0", "limit"],
      ["limit=501", "limit"],
      ["offset=-1", "offset"],
      ["limit=ten", "limit"],
      ["colour=red", "colour"],
    ])("refuses the query %s naming %s", async (query, field) => {
      const res = await get(who, `${c.path}?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe("validation_error");
      expect(res.json().message.startsWith(`${field} `)).toBe(true);
    });
  });

  describe("filters", () => {
    let who: Tenancy;
    const ids: Record<string, number> = {};

    beforeAll(async () => {
      who = await seedTenancy(t);
      ids.b1 = await create(who, "brands", { name: "B1" });
      ids.b2 = await create(who, "brands", { name: "B2" });
      ids.p1 = await create(who, "programs", { name: "P1", brandIds: [ids.b1] });
      ids.p2 = await create(who, "programs", { name: "P2", brandIds: [ids.b1, ids.b2] });
      ids.p3 = await create(who, "programs", { name: "P3" });
      ids.a1 = await create(who, "accounts", { name: "A1", programId: ids.p1 });
      ids.a2 = await create(who, "accounts", { name: "A2", programId: ids.p2, status: "inactive" });
      ids.a3 = await create(who, "accounts", { name: "A3", programId: ids.p3, status: "active" });
      const url = "https://brand.example/";
      ids.l1 = await create(who, "links", { name: "L1", accountId: ids.a1, brandId: ids.b1, url });
      ids.l2 = await create(who, "links", { name: "L2", accountId: ids.a2, brandId: ids.b2, url });
      ids.l3 = await create(who, "links", { name: "L3", accountId: ids.a2, brandId: ids.b1, url });
      ids.l4 = await create(who, "links", { name: "L4", accountId: ids.a3, brandId: ids.b2, url });
    });

    // Placeholders such as {b1} stand for the ids created above.
    it.each([
      ["programs?brandId={b1}", ["P1", "P2"]],
      ["programs?brandId={b2}", ["P2"]],
      ["programs?brandId={b2}&search=p1", []],
      ["accounts?programId={p2}", ["A2"]],
      ["accounts?brandId={b1}", ["A1", "A2"]],
      ["accounts?brandId={b2}", ["A2"]],
      ["accounts?status=inactive", ["A2"]],
      ["accounts?status=active", ["A1", "A3"]],
      ["accounts?status=active&brandId={b1}", ["A1"]],
      ["accounts?programId={p1}&status=inactive", []],
      ["links?accountId={a2}", ["L2", "L3"]],
      ["links?brandId={b1}", ["L1", "L3"]],
      ["links?programId={p2}", ["L2", "L3"]],
      ["links?programId={p3}", ["L4"]],
      ["links?programId={p2}&brandId={b1}", ["L3"]],
      ["links?accountId={a1}&brandId={b2}", []],
    ])("%s lists %j", async (query, names) => {
      const url = query.replace(/\{(\w+)\}/g, (_, key: string) => String(ids[key]));
      const res = await get(who, url);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.map((x: { name: string }) => x.name)).toEqual(names);
      expect(res.json().pagination?.total).toBe(names.length);
      // The total still counts the whole filtered set when the page is smaller.
      const first = await get(who, `${url}&limit=1`);
      expect(first.json().data).toHaveLength(Math.min(1, names.length));
      expect(first.json().pagination?.total).toBe(names.length);
    });

    it("matches nothing for another tenant's ids", async () => {
      const other = await seedTenancy(t);
      const q = await parents(other);
      for (const [path, filter, id] of [
        ["programs", "brandId", q.brandId],
        ["accounts", "programId", q.programId],
        ["accounts", "brandId", q.brandId],
        ["links", "accountId", q.accountId],
        ["links", "brandId", q.brandId],
        ["links", "programId", q.programId],
      ] as const) {
        const res = await get(who, `${path}?${filter}=${id}`);
        expect(res.json()).toMatchObject({ code: "ok", data: [], pagination: { total: 0 } });
      }
    });

    it.each([
      ["programs?brandId=abc", "brandId"],
      ["programs?brandId=0", "brandId"],
      ["accounts?status=paused", "status"],
      ["accounts?programId=1.5", "programId"],
      ["links?accountId=x", "accountId"],
      ["brands?brandId=1", "brandId"],
    ])("refuses %s naming %s", async (url, field) => {
      const res = await get(who, url);
      expect(res.statusCode).toBe(400);
      expect(res.json().message.startsWith(`${field} `)).toBe(true);
    });
  });
});
