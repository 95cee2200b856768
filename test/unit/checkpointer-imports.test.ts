/**
 * The checkpointer is only a checkpointer (issue 24, item 2): nothing it
 * imports, directly or through other files of src/, types included, is a
 * ledger, audit or approval store or the write-ahead unit, and it is built
 * on LangGraph's `BaseCheckpointSaver`, not on another package's saver; no
 * file of src/checkpoint overrides another package's protected members.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../src");
const CHECKPOINTER = resolve(SRC, "checkpoint/checkpointer.ts");

/** Every module specifier a file imports or re-exports, types included. */
function specifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  for (const statement of source.statements) {
    const specifier =
      ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement) ? statement.moduleSpecifier : undefined;
    if (specifier && ts.isStringLiteral(specifier)) found.push(specifier.text);
  }
  return found;
}

/** The files of src/ a file reaches through relative imports, and the packages they import. */
function reach(start: string): { files: string[]; packages: string[] } {
  const files = new Set<string>([start]);
  const packages = new Set<string>();
  const queue = [start];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const specifier of specifiers(file)) {
      if (!specifier.startsWith(".")) {
        packages.add(specifier);
        continue;
      }
      const target = resolve(dirname(file), specifier.replace(/\.js$/, ".ts"));
      if (!existsSync(target) || files.has(target)) continue;
      files.add(target);
      queue.push(target);
    }
  }
  return { files: [...files].map((file) => relative(SRC, file)).sort(), packages: [...packages].sort() };
}

describe("the checkpointer's imports", () => {
  const { files, packages } = reach(CHECKPOINTER);

  it("reach no ledger, audit or approval store, nor the write-ahead unit", () => {
    const stores = files.filter((file) =>
      /(^|\/)(ledger|audit|approval|write-ahead|thread-store|run-)[^/]*\.ts$|(^|\/)runtime\//.test(file),
    );
    expect(stores).toEqual([]);
  });

  it("build on LangGraph's checkpoint contract, not on PostgresSaver", () => {
    expect(packages).toContain("@langchain/langgraph-checkpoint");
    expect(packages).not.toContain("@langchain/langgraph-checkpoint-postgres");
    const text = readFileSync(CHECKPOINTER, "utf8");
    expect(text).toMatch(/class WarrantSaver extends BaseCheckpointSaver\b/);
    expect(text).not.toMatch(/override\s+(async\s+)?_/);
  });

  it("override no protected member of a LangGraph class, in any file of src/checkpoint (serde composes the stock serializer)", () => {
    const folder = resolve(SRC, "checkpoint");
    for (const name of readdirSync(folder).filter((file) => file.endsWith(".ts"))) {
      const text = readFileSync(resolve(folder, name), "utf8");
      expect(text, name).not.toMatch(/override\s+(async\s+)?_/);
      expect(text, name).not.toMatch(/extends\s+JsonPlusSerializer\b/);
    }
  });
});
