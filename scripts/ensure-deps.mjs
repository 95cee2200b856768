#!/usr/bin/env node
// Installs dependencies when node_modules is missing or older than package-lock.json,
// so `npm start`, `npm run chat` and `npm test` work on a fresh clone. Node builtins only.
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const lock = path.join(root, "package-lock.json");
const installed = path.join(root, "node_modules", ".package-lock.json");

const stale = !existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs;
if (stale) {
  process.stderr.write("warrant: installing dependencies (npm ci)…\n");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
}
