#!/usr/bin/env node
// `npm run dev`: the LangGraph dev server (`langgraphjs dev`) on langgraph.json, for
// LangGraph Studio, with our bearer-token auth (src/server/studio-auth.ts) and offline:
// no browser, no CLI analytics, no LangSmith tracing. Listens on PORT (default 2024) and
// HOST (default 127.0.0.1), read through src/env.ts, so it runs under tsx.
// Extra arguments go to `langgraphjs dev` and win over ours (`npm run dev -- --port 3000`).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { loadSettings, REPO_ROOT } from "../src/env.js";
import { isConfigError } from "../src/errors.js";
import { embeddedDatabaseHolder } from "../src/db/database.js";

const OFFLINE = {
  LANGGRAPH_CLI_NO_ANALYTICS: "1",
  LANGSMITH_TRACING: "false",
  LANGSMITH_TRACING_V2: "false",
  LANGCHAIN_TRACING: "false",
  LANGCHAIN_TRACING_V2: "false",
  BROWSER: "none",
};

function cliPath() {
  const manifest = createRequire(import.meta.url).resolve("@langchain/langgraph-cli/package.json");
  const { bin } = JSON.parse(readFileSync(manifest, "utf8"));
  return path.join(path.dirname(manifest), typeof bin === "string" ? bin : bin.langgraphjs);
}

let settings;
try {
  settings = loadSettings();
} catch (error) {
  if (!isConfigError(error)) throw error;
  process.stderr.write(`warrant: ${error.code}: ${error.message}\n`);
  process.exit(1);
}

// The embedded database admits one process: beside `npm start` on it, every Studio run would fail.
// Refuse now, in one line, with the two ways out.
if (!settings.databaseUrl) {
  const holder = await embeddedDatabaseHolder(settings.dataDir);
  if (holder !== undefined) {
    process.stderr.write(
      `warrant: database_unreachable: the embedded database in ${settings.dataDir} is in use by process ${holder} ` +
        "(npm start?); stop it, or run both with DATABASE_URL set to one Postgres server\n",
    );
    process.exit(1);
  }
}

const args = [
  cliPath(),
  "dev",
  "--config",
  path.join(REPO_ROOT, "langgraph.json"),
  "--host",
  settings.server.host,
  "--port",
  String(settings.server.port),
  "--no-browser",
  ...process.argv.slice(2),
];
// Studio's schema view parses graphs/*.ts in a worker (AgentState is an Annotation, so there is
// no runtime JSON schema); the API's 30 s limit is too short on a busy two-core machine.
const SCHEMA_TIMEOUT = { LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS: "120000" };
// The server needs the whole environment (WARRANT_AUTH_SECRET, DATABASE_URL, model keys).
const env = { ...SCHEMA_TIMEOUT, ...process.env, ...OFFLINE };
const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: "inherit", env });

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => {
  process.exitCode = code ?? (signal ? 1 : 0);
});
