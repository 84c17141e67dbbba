import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AddressPolicy, isBlockedAddress, type Resolve, send } from "../src/platform/webhook-sender.js";
import type { TestApp } from "./helpers/app.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  attemptsOf,
  cancelWaitingEvents,
  createHook,
  eventOf,
  recordConversion,
  seedTenantWithCatalog,
  startWebhookTestApp,
} from "./helpers/webhooks.js";

// The SSRF filter of webhook sends (docs/limits.md): IPv6 forms that embed or reach an IPv4
// address through a translator or tunnel (IPv4-compatible, SIIT, NAT64, 6to4, Teredo), site-local
// addresses, and a DNS lookup that never answers. Loopback (where the receivers listen) is allowed
// as 127.0.0.1, as in every webhook test; each IPv6 spelling of it must still be refused.

let rx: Receiver;
const LOOPBACK_ALLOWED = new AddressPolicy(["127.0.0.1"]);

beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => {
  await rx.close();
});

/** IPv6 addresses leading to loopback or a private IPv4 address, or in a non-global range. */
const BLOCKED_V6: [string, string][] = [
  ["::7f00:1", "IPv4-compatible 127.0.0.1"],
  ["::127.0.0.1", "IPv4-compatible 127.0.0.1, dotted"],
  ["::a00:1", "IPv4-compatible 10.0.0.1"],
  ["::808:808", "IPv4-compatible, even of a public address (deprecated form)"],
  ["::ffff:0:7f00:1", "SIIT-translated 127.0.0.1 (::ffff:0:0/96)"],
  ["::ffff:0:10.0.0.1", "SIIT-translated 10.0.0.1, dotted"],
  ["2002:7f00:1::1", "6to4 of 127.0.0.1"],
  ["2002:c0a8:101::1", "6to4 of 192.168.1.1"],
  ["2002:808:808::1", "6to4, even of a public address"],
  ["64:ff9b:1::7f00:1", "local-use NAT64 of 127.0.0.1"],
  ["64:ff9b:1:abcd::a00:1", "local-use NAT64 of 10.0.0.1"],
  ["64:ff9b::7f00:1", "well-known NAT64 of 127.0.0.1"],
  ["64:ff9b::a00:1", "well-known NAT64 of 10.0.0.1"],
  ["64:ff9b::c0a8:101", "well-known NAT64 of 192.168.1.1"],
  ["64:ff9b::a9fe:a9fe", "well-known NAT64 of 169.254.169.254"],
  ["fec0::1", "site-local"],
  ["feff:ffff::1", "site-local, top of the range"],
  ["2001:0:4136:e378::1", "Teredo"],
  ["::ffff:7f00:1", "IPv4-mapped 127.0.0.1"],
  ["::ffff:10.0.0.1", "IPv4-mapped 10.0.0.1"],
  ["::1", "loopback"],
  ["::", "unspecified"],
  ["fd00::1", "unique-local"],
  ["fe80::1%eth0", "link-local with a zone"],
  ["ff02::1", "multicast"],
  ["2001:db8::1", "documentation"],
  ["100::1", "discard"],
];

const PUBLIC: string[] = [
  "8.8.8.8",
  "1.1.1.1",
  "::ffff:8.8.8.8",
  "::ffff:808:808",
  "2606:4700:4700::1111",
  "2001:4860:4860::8888",
  "2a00:1450:4001:80b::200e",
  "2003::1",
];

describe("isBlockedAddress", () => {
  it.each(BLOCKED_V6)("blocks %s (%s)", (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(PUBLIC)("lets the public address %s through", (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  it("keeps blocking the IPv4 private ranges", () => {
    for (const address of ["10.1.2.3", "127.0.0.1", "169.254.169.254", "172.16.0.1", "192.168.0.1", "100.64.0.1"]) {
      expect(isBlockedAddress(address), address).toBe(true);
    }
  });
});

describe("send: an address literal in the URL", () => {
  // An IPv4-mapped address is judged as the IPv4 address it is, so mapped 127.0.0.1 is allowed
  // here like 127.0.0.1 itself; a zone id is no URL host.
  it.each(BLOCKED_V6.filter(([a]) => !a.includes("%") && a !== "::ffff:7f00:1"))(
    "refuses http://[%s] as blocked_address without connecting (%s)",
    async (address) => {
      const before = rx.connections;
      const result = await send(`http://[${address}]:${rx.port}/pb`, "GET", null, {
        timeoutMs: 1000,
        policy: LOOPBACK_ALLOWED,
      });
      expect(result).toMatchObject({ ok: false, errorType: "blocked_address", response: null });
      expect(rx.connections).toBe(before);
    },
  );
});

describe("send: a host name resolving to such an address", () => {
  /** A resolver answering every name with the given addresses. */
  const answering =
    (...addresses: string[]): Resolve =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

  it("refuses a name whose addresses include one embedding loopback, naming it", async () => {
    for (const embedded of ["::7f00:1", "::ffff:0:7f00:1", "2002:7f00:1::1", "64:ff9b:1::7f00:1", "fec0::1"]) {
      const before = rx.connections;
      const result = await send(`http://receiver.test:${rx.port}/pb`, "GET", null, {
        timeoutMs: 1000,
        policy: LOOPBACK_ALLOWED,
        resolve: answering("127.0.0.1", embedded),
      });
      expect(result, embedded).toMatchObject({ ok: false, errorType: "blocked_address" });
      expect(result.error).toContain(embedded);
      expect(rx.connections).toBe(before);
    }
  });

  it("delivers to a name resolving to an allowed address (the resolver is the one used)", async () => {
    rx.on("/resolved", { status: 204 });
    const result = await send(`http://receiver.test:${rx.port}/resolved`, "GET", null, {
      timeoutMs: 1000,
      policy: LOOPBACK_ALLOWED,
      resolve: answering("127.0.0.1"),
    });
    expect(result).toMatchObject({ ok: true, errorType: null, response: { status: 204 } });
    expect(rx.at("/resolved")).toHaveLength(1);
    expect(rx.at("/resolved")[0]?.headers.host).toBe(`receiver.test:${rx.port}`);
  });
});

describe("send: a host name through the system resolver", () => {
  it("delivers to localhost when it is allowed (connecting to the address it checked)", async () => {
    rx.on("/by-name", { status: 200, body: "named" });
    const result = await send(`http://localhost:${rx.port}/by-name`, "GET", null, {
      timeoutMs: 2000,
      policy: new AddressPolicy(["localhost"]),
    });
    expect(result).toMatchObject({ ok: true, errorType: null, response: { status: 200, body: "named" } });
    expect(rx.at("/by-name")).toHaveLength(1);
  });
});

describe("send: a DNS lookup that never answers", () => {
  const silent: Resolve = () => new Promise(() => undefined);

  it("gives up within the webhook timeout as a dns error", async () => {
    const started = performance.now();
    const result = await send("http://slow-dns.test/pb", "GET", null, {
      timeoutMs: 300,
      policy: LOOPBACK_ALLOWED,
      resolve: silent,
    });
    const elapsed = performance.now() - started;
    expect(result).toMatchObject({ ok: false, errorType: "dns", response: null });
    expect(result.error).toBe("The DNS lookup of slow-dns.test did not answer within 300 ms");
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1500);
    expect(result.durationMs).toBeGreaterThanOrEqual(290);
  });

  it("the lookup and the request share one deadline", async () => {
    rx.on("/slow-after-dns", "hang");
    const slowResolve: Resolve = () =>
      new Promise((resolve) => setTimeout(() => resolve([{ address: "127.0.0.1", family: 4 }]), 250));
    const started = performance.now();
    const result = await send(`http://receiver.test:${rx.port}/slow-after-dns`, "GET", null, {
      timeoutMs: 400,
      policy: LOOPBACK_ALLOWED,
      resolve: slowResolve,
    });
    const elapsed = performance.now() - started;
    expect(result).toMatchObject({ ok: false, errorType: "timeout" });
    // 250 ms of lookup and then the rest of the 400 ms, not another 400 ms.
    expect(elapsed).toBeLessThan(750);
  });
});

describe("through the API: postbacks to embedded loopback are refused", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startWebhookTestApp();
  });
  afterAll(async () => {
    await cancelWaitingEvents(t);
    await t.close();
  });

  it("logs blocked_address for each and the receiver sees no connection", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const addresses = ["::7f00:1", "::ffff:0:7f00:1", "2002:7f00:1::1", "64:ff9b:1::7f00:1", "fec0::1"];
    const hooks = new Map<string, string>();
    for (const address of addresses) {
      // Saving refuses these addresses too; set them behind the API's back, as a URL saved
      // before that rule would be, so that the send-time screen is what is tested here.
      const hook = await createHook(t, who, { url: `https://receiver-${hooks.size}.example/api` });
      await t.ctx.db.query("update outgoing_webhooks set url = $2 where id = $1", [
        hook.id,
        `http://[${address}]:${rx.port}/api-${hooks.size}`,
      ]);
      hooks.set(hook.id, address);
    }
    const before = rx.connections;
    const conversion = await recordConversion(t, who, { type: "Signup" });
    expect(await t.ctx.delivery.tick()).toBe(addresses.length);
    expect(rx.connections).toBe(before);
    for (const [hookId, address] of hooks) {
      const event = await eventOf(t, who, conversion.id, hookId);
      const [attempt] = await attemptsOf(t, who, event.id);
      expect(attempt, address).toMatchObject({ errorType: "blocked_address", response: null });
    }
  });
});
