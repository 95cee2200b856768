// Import cycles in a source tree, type imports included.
//
//   node scripts/import-cycles.mjs [src] [--folders]
//
// Nodes are files (the default) or, with --folders, the first-level folders of
// the tree, where a file directly in the root is a node of its own. An edge is
// any relative import of a file under the root: `import`, `import type`,
// `export … from` and `import()` all count, because a type-only circle still
// says that two rooms are one job (CONVENTIONS 9d). Prints each strongly
// connected group with the imports that close it; exits 1 if there is any.
// test/unit/structure.test.ts imports the same functions.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";

/** Every .ts/.tsx file under `root` (declaration files left out), sorted. */
export function sourceFiles(root) {
  const found = [];
  const walk = (directory) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) found.push(path);
    }
  };
  walk(root);
  return found.sort();
}

/** The module specifiers a file names: static imports and re-exports (type-only ones too) and dynamic imports. */
export function importedSpecifiers(text) {
  return ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName);
}

/** The file a relative specifier resolves to (`./x.js` → `./x.ts`), or undefined when it is not a file under `root`. */
function resolveImport(root, from, specifier) {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(from), specifier).replace(/\.(m?js|tsx?)$/, "");
  for (const candidate of [`${base}.ts`, `${base}.tsx`, join(base, "index.ts")]) {
    if (candidate.startsWith(root + sep) && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The import graph of `root`: node → the nodes it imports, and for each edge one
 * import that makes it (`from → to`, relative to the root).
 * @param {string} root
 * @param {{ folders?: boolean }} [options]
 */
export function importGraph(root, options = {}) {
  const absoluteRoot = resolve(root);
  const nodeOf = (file) => {
    const parts = relative(absoluteRoot, file).split(sep);
    if (!options.folders) return parts.join("/");
    return parts.length > 1 ? parts[0] : parts[0].replace(/\.tsx?$/, "");
  };
  const edges = new Map();
  const reasons = new Map();
  for (const file of sourceFiles(absoluteRoot)) {
    const from = nodeOf(file);
    if (!edges.has(from)) edges.set(from, new Set());
    for (const specifier of importedSpecifiers(readFileSync(file, "utf8"))) {
      const target = resolveImport(absoluteRoot, file, specifier);
      if (target === undefined) continue;
      const to = nodeOf(target);
      if (to === from) continue;
      edges.get(from).add(to);
      const key = `${from}\u0000${to}`;
      if (!reasons.has(key)) {
        reasons.set(
          key,
          `${relative(absoluteRoot, file).split(sep).join("/")} → ${relative(absoluteRoot, target).split(sep).join("/")}`,
        );
      }
    }
  }
  return { edges, reasons };
}

/** The strongly connected groups of more than one node (Tarjan), each sorted, sorted by their first node. */
export function stronglyConnected(edges) {
  let counter = 0;
  const stack = [];
  const onStack = new Set();
  const index = new Map();
  const lowest = new Map();
  const groups = [];
  const nodes = new Set([...edges.keys(), ...[...edges.values()].flatMap((targets) => [...targets])]);
  const visit = (node) => {
    index.set(node, counter);
    lowest.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        lowest.set(node, Math.min(lowest.get(node), lowest.get(next)));
      } else if (onStack.has(next)) {
        lowest.set(node, Math.min(lowest.get(node), index.get(next)));
      }
    }
    if (lowest.get(node) !== index.get(node)) return;
    const group = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1) groups.push(group.sort());
  };
  for (const node of [...nodes].sort()) if (!index.has(node)) visit(node);
  return groups.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/**
 * The cycles of `root` as readable lines: one per group, then the imports
 * inside it (at most `shown` per group). Empty when there is none.
 */
export function describeCycles(root, options = {}) {
  const { edges, reasons } = importGraph(root, options);
  const lines = [];
  for (const group of stronglyConnected(edges)) {
    lines.push(`cycle of ${group.length}: ${group.join(", ")}`);
    const inside = new Set(group);
    const closing = group.flatMap((from) =>
      [...(edges.get(from) ?? [])].filter((to) => inside.has(to)).map((to) => reasons.get(`${from}\u0000${to}`)),
    );
    for (const reason of closing.slice(0, options.shown ?? 8)) lines.push(`  ${reason}`);
    if (closing.length > (options.shown ?? 8)) lines.push(`  … ${closing.length - (options.shown ?? 8)} more imports`);
  }
  return lines;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const args = process.argv.slice(2);
  const folders = args.includes("--folders");
  const root = args.find((argument) => !argument.startsWith("--")) ?? "src";
  const lines = describeCycles(root, { folders });
  const kind = folders ? "folder" : "file";
  for (const line of lines) console.log(line);
  const groups = lines.filter((line) => line.startsWith("cycle")).length;
  console.log(
    groups ? `${groups} ${kind} cycle(s), type imports included` : `no ${kind} cycles, type imports included`,
  );
  process.exit(groups ? 1 : 0);
}
