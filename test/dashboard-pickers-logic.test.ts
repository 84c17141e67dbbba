import { describe, expect, it } from "vitest";
import { movedIndex, shownLabel } from "../web/src/components/SearchPickerModel.js";
import { optionOf } from "../web/src/pages/catalog/picker-labels.js";

const row = { id: 7, name: "nova-bingo main", createdAt: "", updatedAt: "" };

describe("searchable picker logic", () => {
  it("labels a brand link with its brand and account, and other rows by name", () => {
    const link = optionOf({ ...row, names: { account: "Acme account", brand: "Nova Casino" } });
    expect(shownLabel(link)).toBe("nova-bingo main · Nova Casino / Acme account");
    expect(shownLabel(optionOf({ ...row, names: { account: null, brand: "Nova Casino" } }))).toBe(
      "nova-bingo main · Nova Casino / (account gone)",
    );
    expect(shownLabel(optionOf({ ...row, name: "summer-sale" }))).toBe("summer-sale");
  });

  it.each([
    ["ArrowDown", -1, 3, 0],
    ["ArrowDown", 1, 3, 2],
    ["ArrowDown", 2, 3, 2],
    ["ArrowUp", 2, 3, 1],
    ["ArrowUp", 0, 3, 0],
    ["Home", 2, 3, 0],
    ["End", 0, 3, 2],
    ["ArrowDown", -1, 0, -1],
    ["x", 1, 3, 1],
  ])("%s from %i among %i moves to %i", (key, active, count, expected) => {
    expect(movedIndex(key, active, count)).toBe(expected);
  });
});
