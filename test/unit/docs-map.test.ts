/**
 * Every heading of the old single-file README lives in exactly one page: docs/README-headings.json maps each
 * to the page and anchor that hold it, and each of those anchors exists. The README stays short.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { anchorsOf, readText } from "../support/markdown.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

interface HeadingMap {
  headings: { heading: string; level: number; target: string }[];
}

describe("the README heading map", () => {
  const map = JSON.parse(readText(ROOT, "docs/README-headings.json")) as HeadingMap;

  it("holds every heading of the old README (26 sections, 17 subsections; Contents is gone)", () => {
    expect(map.headings.filter((h) => h.level === 2)).toHaveLength(26);
    expect(map.headings).toHaveLength(43);
  });

  it("sends each heading to one page and anchor, and the anchor is there", () => {
    const missing = map.headings.filter(({ target }) => {
      const [file = "", anchor = ""] = target.split("#");
      return !anchorsOf(readText(ROOT, file)).has(anchor);
    });
    expect(missing).toEqual([]);
    const targets = map.headings.map((h) => h.target);
    expect(new Set(targets).size).toBe(targets.length);
  });

  it("keeps the README at most 250 lines", () => {
    expect(readText(ROOT, "README.md").split("\n").length).toBeLessThanOrEqual(250);
  });

  it("links the newcomer's questions from the README straight to their pages", () => {
    const readme = readText(ROOT, "README.md");
    for (const target of [
      "docs/guides/mcp-servers.md#oauth-protected-mcp-servers",
      "docs/guides/cli.md#one-runs-timeline-npm-run-trace",
      "docs/guides/production.md#security-what-a-deployment-must-set",
      "docs/reference/errors.md#outcome_unknown",
    ]) {
      expect(readme).toContain(`](${target})`);
    }
  });
});
