#!/usr/bin/env node
// Compiles the server's TypeScript (src/ and graphs/) into plain ES modules under .build/, in the same layout, so
// `npm start` runs it on Node without a loader. Each file is transformed on its own (types stripped, nothing
// bundled or minified): under a second for the whole tree, so every start compiles afresh and never runs a stale
// build. Why not tsx, as the tests and `npm run dev` do: its transform keeps every function's name with a helper
// call wherever a closure is made (1.4% of the busy server's CPU in a V8 profile of the served bench), and its loader
// runs a thread of its own. The MCP servers (tools/) still start under tsx.
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Where the compiled tree goes; src/env.ts knows this name (REPO_ROOT is the folder above it). */
export const BUILD_DIR = ".build";
const SOURCES = ["src", "graphs"];

/** Every TypeScript source under `folder` (declarations left out). */
function sources(folder) {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
}

/** `content` at `file` unless it is there already; replaced by a rename, so a reader sees a whole file. */
function writeIfChanged(file, content) {
  try {
    if (readFileSync(file).equals(content)) return;
  } catch {
    // not there yet
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, content);
  renameSync(temporary, file);
}

/**
 * Compiles the server into `<root>/.build`; returns the entry's path. Several at once (parallel starts) are safe:
 * each file is replaced whole, and only when its compiled text changed.
 */
export async function buildServer() {
  const result = await build({
    entryPoints: SOURCES.flatMap((folder) => sources(path.join(root, folder))),
    outdir: path.join(root, BUILD_DIR),
    outbase: root,
    format: "esm",
    platform: "node",
    target: `node${process.versions.node.split(".")[0]}`,
    // Linked maps (.js.map), read only with NODE_OPTIONS=--enable-source-maps: stacks then name the .ts lines.
    sourcemap: "linked",
    logLevel: "warning",
    write: false,
  });
  for (const output of result.outputFiles) writeIfChanged(output.path, Buffer.from(output.contents));
  return path.join(root, BUILD_DIR, "src", "server", "main.js");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildServer();
