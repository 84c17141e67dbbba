import { describe, expect, it } from "vitest";
import { validateIssuesSearch } from "../web/src/pages/issues/search.js";

describe("issues list address", () => {
  it("keeps a status, a kind the API knows and a positive offset", () => {
    expect(validateIssuesSearch({ status: "closed", kind: "webhook_url_invalid", offset: "25" })).toEqual({
      status: "closed",
      kind: "webhook_url_invalid",
      offset: 25,
    });
  });

  it("drops the rest: the first page of every issue", () => {
    expect(validateIssuesSearch({ status: "resolved", kind: "other", offset: "-5" })).toEqual({});
    expect(validateIssuesSearch({ offset: "2.5" })).toEqual({});
    expect(validateIssuesSearch({ offset: 0 })).toEqual({});
  });
});
