import { describe, expect, it } from "vitest";
import { TokenCache } from "../src/features/google-ads/token-cache.js";

// The access-token cache of the uploader: bounded in bytes, forgetting a token when it nears its
// expiry or when the integration's credentials are saved again. Pure memory: no database.

describe("the Google Ads token cache", () => {
  it("keeps a token until five minutes before it expires, and only for the same stored credentials", () => {
    let now = 0;
    const cache = new TokenCache(() => now);
    cache.set("7", "seal-a", "ya29.token", 3600);
    expect(cache.get("7", "seal-a")).toBe("ya29.token");
    expect(cache.get("7", "seal-b")).toBeNull();
    cache.set("7", "seal-a", "ya29.token", 3600);
    now = 54 * 60_000;
    expect(cache.get("7", "seal-a")).toBe("ya29.token");
    now = 55 * 60_000;
    expect(cache.get("7", "seal-a")).toBeNull();
    // A token that lives less than the margin is not kept at all.
    cache.set("8", "seal", "ya29.short", 60);
    expect(cache.get("8", "seal")).toBeNull();
  });

  it("drops the oldest tokens past 1 MiB", () => {
    const cache = new TokenCache(() => 0);
    const token = `ya29.${"x".repeat(2000)}`;
    // About 4.2 KB an entry: 1 MiB holds some 250; 1,000 are set.
    for (let i = 0; i < 1000; i++) cache.set(String(i), "seal", token, 3600);
    expect(cache.get("0", "seal")).toBeNull();
    expect(cache.get("999", "seal")).toBe(token);
    const kept = Array.from({ length: 1000 }, (_, i) => cache.get(String(i), "seal")).filter((t) => t !== null);
    expect(kept.length).toBeGreaterThan(200);
    expect(kept.length).toBeLessThan(260);
  });
});
