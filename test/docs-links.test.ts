import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The README is the front page and stays short; everything else lives under docs/. Every
// relative link in them (a file, a file#anchor or a #anchor on the same page) must lead somewhere,
// anchors resolved as GitHub renders headings, so a renamed heading or a moved page fails here.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** At most 10 KiB: what the service is, the two commands, configuration and links. */
const README_MAX_BYTES = 10_240;

/** Fenced code blocks and inline code spans hold no links or headings. */
function stripCode(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  // Headings may hold inline code (its text counts), so keep the code spans' text here.
  const withoutFences = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const match of withoutFences.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const text = (match[1] ?? "").replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/<[^>]+>/g, "");
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count === 0 ? base : `${base}-${count}`);
  }
  return slugs;
}

/** The dead relative links of one markdown file, as "target: reason". */
function deadLinks(file: string): string[] {
  const markdown = readFileSync(file, "utf8");
  const dead: string[] = [];
  for (const match of stripCode(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = match[1] ?? "";
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: ... : not ours to follow
    const [pathPart = "", anchor] = target.split("#", 2);
    const linked = pathPart === "" ? file : resolve(dirname(file), decodeURIComponent(pathPart));
    if (linked !== ROOT && !linked.startsWith(ROOT + sep)) {
      dead.push(`${target}: leaves the repository`);
      continue;
    }
    if (!existsSync(linked)) {
      dead.push(`${target}: no such file`);
      continue;
    }
    if (anchor === undefined) continue;
    if (statSync(linked).isDirectory() || !linked.endsWith(".md")) {
      dead.push(`${target}: an anchor into a file that is not markdown`);
    } else if (!headingSlugs(readFileSync(linked, "utf8")).has(decodeURIComponent(anchor))) {
      dead.push(`${target}: no heading #${anchor} in ${relative(ROOT, linked)}`);
    }
  }
  return dead;
}

const docsDir = join(ROOT, "docs");
const pages = [
  join(ROOT, "README.md"),
  ...readdirSync(docsDir)
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(docsDir, name)),
];

describe("README and docs/", () => {
  it(`README.md is at most ${README_MAX_BYTES} bytes`, () => {
    expect(statSync(join(ROOT, "README.md")).size).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it.each(pages.map((page) => [relative(ROOT, page), page]))("every relative link in %s resolves", (_name, page) => {
    expect(deadLinks(page)).toEqual([]);
  });

  it("every page under docs/ is linked from the README", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const unlinked = pages
      .filter((page) => page.startsWith(docsDir))
      .filter((page) => !readme.includes(`(${relative(ROOT, page)})`));
    expect(unlinked.map((page) => relative(ROOT, page))).toEqual([]);
  });

  it("slugs headings as GitHub does", () => {
    const slugs = headingSlugs(
      "# Limits and safety\n## Embedded database, buffers and what a crash can lose\n## `GET /go`: the click\n## Notes\n## Notes\n```\n# not a heading\n```\n",
    );
    expect([...slugs]).toEqual([
      "limits-and-safety",
      "embedded-database-buffers-and-what-a-crash-can-lose",
      "get-go-the-click",
      "notes",
      "notes-1",
    ]);
  });

  it("finds a dead file, a dead anchor and a link out of the repository", () => {
    const dead = deadLinks(join(ROOT, "test", "fixtures-docs-links", "sample.md"));
    expect(dead).toEqual([
      "missing.md: no such file",
      "../../README.md#no-such-heading: no heading #no-such-heading in README.md",
      "#nowhere: no heading #nowhere in test/fixtures-docs-links/sample.md",
      "../../../outside.md: leaves the repository",
    ]);
  });
});
