import { describe, expect, it } from "vitest";
import { ENTITIES } from "../web/src/pages/catalog/entities.js";
import { bodyOf, initialValues } from "../web/src/pages/catalog/form-values.js";
import { filtersOf, parseGeneratorSearch, parseListSearch, trackerParam } from "../web/src/pages/catalog/search.js";

describe("catalog list address", () => {
  it("keeps search, a positive offset, ids and a known status", () => {
    expect(
      parseListSearch({
        search: "  acme ",
        offset: "50",
        brandId: 3,
        programId: "7",
        accountId: 9,
        status: "inactive",
      }),
    ).toEqual({ search: "acme", offset: 50, brandId: 3, programId: 7, accountId: 9, status: "inactive" });
  });

  it("reads a search the router parsed as a number as text", () => {
    expect(parseListSearch({ search: 42 })).toEqual({ search: "42" });
  });

  it("drops what the API would refuse: the first page, unfiltered", () => {
    expect(
      parseListSearch({ search: "  ", offset: -5, brandId: 0, programId: 1.5, accountId: "x", status: "gone" }),
    ).toEqual({});
    expect(parseListSearch({ offset: 0, brandId: 2 ** 60 })).toEqual({});
    expect(parseListSearch({ search: "x".repeat(300) }).search).toHaveLength(200);
  });

  it("applies only the filters a list offers", () => {
    const search = { search: "a", brandId: 1, programId: 2, accountId: 3, status: "active" as const };
    expect(filtersOf(ENTITIES.brands, search)).toEqual({});
    expect(filtersOf(ENTITIES.programs, search)).toEqual({ brandId: 1 });
    expect(filtersOf(ENTITIES.accounts, search)).toEqual({ brandId: 1, programId: 2, status: "active" });
    expect(filtersOf(ENTITIES.links, search)).toEqual({ brandId: 1, programId: 2, accountId: 3 });
  });
});

describe("link generator address", () => {
  it("keeps the link, the source and one tracker: an id wins over a name", () => {
    expect(parseGeneratorSearch({ link: 1, source: "2", trackerId: 3, trackerName: "spring" })).toEqual({
      link: 1,
      source: 2,
      trackerId: 3,
    });
    expect(parseGeneratorSearch({ trackerName: " Spring-Promo " })).toEqual({ trackerName: "Spring-Promo" });
  });

  it("passes a name the API will judge, however short or long", () => {
    expect(parseGeneratorSearch({ trackerName: "ab" })).toEqual({ trackerName: "ab" });
    expect(parseGeneratorSearch({ trackerName: "y".repeat(60) }).trackerName).toHaveLength(60);
  });

  it("asks the API for the tracker as an id's digits or as the name", () => {
    expect(trackerParam({ trackerId: 12 })).toBe("12");
    expect(trackerParam({ trackerName: "spring" })).toBe("spring");
    expect(trackerParam({})).toBeUndefined();
  });
});

describe("catalog form values", () => {
  it("starts a new row from the list it was narrowed to", () => {
    expect(initialValues(ENTITIES.programs, undefined, { brandId: 4 })).toEqual({ name: "", brandIds: ["4"] });
    expect(initialValues(ENTITIES.accounts, undefined, { programId: 2, brandId: 4 })).toEqual({
      name: "",
      programId: "2",
      username: "",
      status: "active",
    });
    expect(initialValues(ENTITIES.links, undefined, { programId: 2 })).toEqual({
      name: "",
      accountId: "",
      brandId: "",
      url: "",
    });
  });

  it("starts an edit from the row, nulls as empty", () => {
    const row = { id: 5, name: "Main", programId: 2, username: null, status: "inactive" };
    expect(initialValues(ENTITIES.accounts, row)).toEqual({
      name: "Main",
      programId: "2",
      username: "",
      status: "inactive",
    });
    expect(initialValues(ENTITIES.programs, { id: 1, name: "P", brandIds: [3, 1] })).toEqual({
      name: "P",
      brandIds: ["3", "1"],
    });
  });

  it("creates with every field: an empty name for the API to refuse, no unchosen pointer, no empty optional", () => {
    expect(bodyOf(ENTITIES.accounts, { name: "", programId: "", username: "", status: "active" })).toEqual({
      name: "",
      status: "active",
    });
    expect(bodyOf(ENTITIES.programs, { name: "P", brandIds: ["3", "1"] })).toEqual({ name: "P", brandIds: [3, 1] });
    expect(bodyOf(ENTITIES["traffic-sources"], { name: "S", url: "" })).toEqual({ name: "S" });
  });

  it("edits only what changed, an emptied optional field as null", () => {
    const initial = { name: "Main", programId: "2", username: "aff1", status: "active" };
    expect(bodyOf(ENTITIES.accounts, { ...initial, username: "" }, initial)).toEqual({ username: null });
    expect(bodyOf(ENTITIES.accounts, { ...initial, programId: "7", status: "inactive" }, initial)).toEqual({
      programId: 7,
      status: "inactive",
    });
    expect(bodyOf(ENTITIES.accounts, initial, initial)).toEqual({});
    // The same brands in another order are no change.
    const program = { name: "P", brandIds: ["1", "3"] };
    expect(bodyOf(ENTITIES.programs, { name: "P", brandIds: ["3", "1"] }, program)).toEqual({});
    expect(bodyOf(ENTITIES.programs, { name: "P", brandIds: [] }, program)).toEqual({ brandIds: [] });
  });
});
