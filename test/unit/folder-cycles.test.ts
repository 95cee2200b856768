/**
 * No folder cycles among value imports in src/ (issue 24, item 6): if a file
 * in folder A imports a value from folder B, no file in B (transitively)
 * imports a value from A. Type-only imports (`import type`, or every
 * specifier marked `type`) are erased at build time and do not count.
 * A file directly in src/ (`state.ts`, `errors.ts`) is a unit of its own.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The module specifiers a file imports values from (static imports, re-exports, dynamic imports). */
function valueImports(text: string, fileName: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly)));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly =
        node.isTypeOnly ||
        (node.exportClause !== undefined &&
          ts.isNamedExports(node.exportClause) &&
          node.exportClause.elements.length > 0 &&
          node.exportClause.elements.every((element) => element.isTypeOnly));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every elementary cycle of the folder graph, each once, starting at its smallest folder name. */
function folderCycles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const cycles: string[][] = [];
  const folders = [...graph.keys()].sort();
  for (const start of folders) {
    // Only cycles whose smallest folder is `start`, so each is reported once.
    const walk = (folder: string, path: string[]) => {
      for (const next of [...(graph.get(folder) ?? [])].sort()) {
        if (next === start) cycles.push([...path, start]);
        else if (next > start && !path.includes(next)) walk(next, [...path, next]);
      }
    };
    walk(start, [start]);
  }
  return cycles;
}

/**
 * The unit a file belongs to: its top-level folder of src/ (a subfolder such as
 * server/routes counts as part of its folder), or the file itself when it sits
 * in src/ directly (`state.ts`, `errors.ts`, `host.ts` are each their own unit).
 */
function folderOf(file: string): string {
  const path = relative(SRC, file).replace(/\.ts$/, ".js");
  const parts = path.split(sep);
  return parts.length === 1 ? path : (parts[0] ?? path);
}

/** Folder → folders it imports values from, over every file of src/. */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const specifier of valueImports(readFileSync(file, "utf8"), file)) {
      if (!specifier.startsWith(".")) continue;
      const target = resolve(dirname(file), specifier);
      if (!target.startsWith(SRC)) continue;
      const to = folderOf(target);
      if (to !== from) edges.add(to);
    }
  }
  return graph;
}

describe("folder cycles among value imports in src/", () => {
  it("finds none", () => {
    expect(folderCycles(folderGraph())).toEqual([]);
  });

  it("counts value imports and re-exports, not type-only ones", () => {
    const text = [
      'import type { A } from "./a.js";',
      'import { type B } from "./b.js";',
      'import { type C, d } from "./c.js";',
      'import e from "./e.js";',
      'import * as f from "./f.js";',
      'import "./g.js";',
      'export { h } from "./h.js";',
      'export type { I } from "./i.js";',
      'export * from "./j.js";',
      'const k = await import("./k.js");',
    ].join("\n");
    expect(valueImports(text, "x.ts")).toEqual(["./c.js", "./e.js", "./f.js", "./g.js", "./h.js", "./j.js", "./k.js"]);
  });

  it("reports a cycle through two folders, and none in a chain", () => {
    const cyclic = new Map([
      [".", new Set(["runtime"])],
      ["runtime", new Set(["policy", "."])],
      ["policy", new Set<string>()],
    ]);
    expect(folderCycles(cyclic)).toEqual([[".", "runtime", "."]]);
    const chain = new Map([
      [".", new Set(["runtime"])],
      ["runtime", new Set(["policy"])],
      ["policy", new Set<string>()],
    ]);
    expect(folderCycles(chain)).toEqual([]);
  });
});
