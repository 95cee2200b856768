#!/usr/bin/env node
// Builds the chat page (web/) into web/dist with Vite when the build is missing or older
// than any of its inputs, so `npm start` and `npm test` serve a current page on a fresh
// clone. Offline: Vite bundles only what is in node_modules. `--force` rebuilds anyway.
import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const web = path.join(root, "web");
const outDir = path.join(web, "dist");
const builtMarker = path.join(outDir, "index.html");

/** Newest modification time under `target` (a file or a folder, recursively). */
function newest(target) {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(target)) latest = Math.max(latest, newest(path.join(target, entry)));
  return latest;
}

const inputs = [
  path.join(web, "index.html"),
  path.join(web, "src"),
  // The wording the page shares with the CLI (web/src/wording.ts imports it).
  path.join(root, "src", "wording"),
  path.join(root, "package-lock.json"),
  fileURLToPath(import.meta.url),
];
const force = process.argv.includes("--force");
const stale = force || !existsSync(builtMarker) || statSync(builtMarker).mtimeMs < Math.max(...inputs.map(newest));

if (stale) {
  process.stderr.write("warrant: building the chat page (web/ → web/dist)…\n");
  // Built beside, then swapped in: two processes building at once (parallel test files)
  // never write into one folder, and a reader sees the old build or the new one.
  const staging = path.join(web, `dist.building-${process.pid}`);
  const { build } = await import("vite");
  await build({
    configFile: false,
    root: web,
    base: "/",
    logLevel: "warn",
    // JSX through Vite's own transformer (oxc); no React plugin is needed for a production build.
    oxc: { jsx: { runtime: "automatic", importSource: "react" } },
    build: {
      outDir: staging,
      emptyOutDir: true,
      assetsDir: "assets",
      sourcemap: false,
      chunkSizeWarningLimit: 2048,
      rolldownOptions: {
        // The SDK's React modules start with "use client" (for server-component bundlers); harmless here.
        onLog(level, log, handler) {
          if (log.code === "MODULE_LEVEL_DIRECTIVE") return;
          handler(level, log);
        },
      },
    },
  });
  const retired = path.join(web, `dist.old-${process.pid}`);
  try {
    renameSync(outDir, retired);
  } catch (error) {
    if (error.code !== "ENOENT") throw error; // no earlier build (or another process moved it)
  }
  try {
    renameSync(staging, outDir);
  } catch (error) {
    // Another build was swapped in first: it is as new as ours.
    if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    rmSync(staging, { recursive: true, force: true });
  }
  rmSync(retired, { recursive: true, force: true });
}
