/**
 * The shape of src/ (issue 38, "Done when"): no import cycle among files or
 * among first-level folders, type imports included (CONVENTIONS 9d); every
 * folder says what it holds in a README.md; no file over 400 lines.
 * The cycle finder is scripts/import-cycles.mjs, the same one run by hand.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { describeCycles, importedSpecifiers, sourceFiles, stronglyConnected } from "../../scripts/import-cycles.mjs";

const SRC = resolve(import.meta.dirname, "../../src");
const MAX_LINES = 400;

/** Every folder below src/ (src/ itself not included), as paths relative to src/. */
function foldersUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = join(directory, entry.name);
      return [relative(SRC, path), ...foldersUnder(path)];
    })
    .sort();
}

/** Whether a README has a heading and, outside code blocks, at least one line of prose that is not a heading, list or table. */
function hasHeadingAndParagraph(text: string): boolean {
  let fenced = false;
  let heading = false;
  let paragraph = false;
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed.startsWith("```")) {
      fenced = !fenced;
      continue;
    }
    if (fenced || trimmed === "") continue;
    if (/^#{1,6}\s+\S/.test(trimmed)) heading = true;
    else if (!/^([-*+>|]|\d+\.)/.test(trimmed) && /[A-Za-z]{2,}/.test(trimmed)) paragraph = true;
  }
  return heading && paragraph;
}

/** Folders under src/ whose README.md is missing or has no heading and paragraph, each with what is wrong. */
function foldersWithoutHeader(): string[] {
  return foldersUnder(SRC).flatMap((folder) => {
    const readme = join(SRC, folder, "README.md");
    if (!existsSync(readme)) return [`${folder}: no README.md`];
    return hasHeadingAndParagraph(readFileSync(readme, "utf8"))
      ? []
      : [`${folder}: README.md has no heading and paragraph`];
  });
}

/** Lines of a file as an editor counts them (a final newline does not start another line). */
const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

function filesOverLimit(): string[] {
  return sourceFiles(SRC)
    .map((file) => ({ file: relative(SRC, file), lines: lineCount(readFileSync(file, "utf8")) }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ file, lines }) => `${file}: ${lines} lines`);
}

describe("src/ rooms", () => {
  it("has no import cycle among files, type imports included", () => {
    expect(describeCycles(SRC)).toEqual([]);
  });

  it("has no import cycle among first-level folders (a file directly in src/ is its own node)", () => {
    expect(describeCycles(SRC, { folders: true })).toEqual([]);
  });

  it("has a README.md with a heading and a paragraph in every folder", () => {
    expect(foldersWithoutHeader()).toEqual([]);
  });
});

describe("src/ file sizes", () => {
  it(`has no file over ${MAX_LINES} lines`, () => {
    expect(filesOverLimit()).toEqual([]);
  });
});

describe("the checks themselves", () => {
  it("count type-only imports, re-exports and dynamic imports as edges", () => {
    const text = [
      'import type { A } from "./a.js";',
      'import { type B } from "./b.js";',
      'import c from "./c.js";',
      'export { d } from "./d.js";',
      'export type { E } from "./e.js";',
      'const f = await import("./f.js");',
      'import "./g.js";',
    ].join("\n");
    expect(importedSpecifiers(text).sort()).toEqual([
      "./a.js",
      "./b.js",
      "./c.js",
      "./d.js",
      "./e.js",
      "./f.js",
      "./g.js",
    ]);
  });

  it("find a circle through three nodes, and none in a chain", () => {
    const circle = new Map([
      ["a", new Set(["b"])],
      ["b", new Set(["c"])],
      ["c", new Set(["a", "d"])],
    ]);
    expect(stronglyConnected(circle)).toEqual([["a", "b", "c"]]);
    const chain = new Map([
      ["a", new Set(["b"])],
      ["b", new Set(["c"])],
    ]);
    expect(stronglyConnected(chain)).toEqual([]);
  });

  it("tell a README with a heading and a paragraph from one with a heading or a list only", () => {
    expect(hasHeadingAndParagraph("# checkpoint\n\nThe LangGraph saver and its tables.\n")).toBe(true);
    expect(hasHeadingAndParagraph("# checkpoint\n")).toBe(false);
    expect(hasHeadingAndParagraph("# checkpoint\n\n- saver.ts\n- rows.ts\n")).toBe(false);
    expect(hasHeadingAndParagraph("The saver.\n")).toBe(false);
    expect(hasHeadingAndParagraph("# checkpoint\n\n```\nnot prose\n```\n")).toBe(false);
  });

  it("count lines as an editor does", () => {
    expect(lineCount("a\nb\n")).toBe(2);
    expect(lineCount("a\nb")).toBe(2);
  });
});
