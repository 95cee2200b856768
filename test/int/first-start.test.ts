/**
 * The first minutes on one checkout (issue 37, item 8): `npm start` on the
 * embedded database, then a second `npm start` on a Postgres server
 * (DATABASE_URL) from the same checkout, started and stopped. Each writes
 * its own runtime file, so the embedded server's `server.json` is neither
 * overwritten nor removed, and the CLI on the embedded database still goes
 * through the embedded server. `npm run dev` (Studio) beside that server
 * refuses at start with one line; once the server is stopped, Studio runs
 * on the embedded database and a run completes through the SDK, with no
 * error message that is JSON inside JSON.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadApiSecret, mintApiToken } from "../../src/auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory } from "../../src/auth/principal.js";
import { REPO_ROOT } from "../../src/env.js";
import { databaseIdentity, runtimeFilePath } from "../../src/server/runtime-file.js";
import { type Finished, outputOf, warrantLines } from "../support/child-output.js";
import { freePort } from "../support/ports.js";
import { stopGroup, until } from "./support/processes.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { spawnServer, type ServerProcess } from "./support/server-process.js";

const TIMEOUT_MS = 300_000;
const QUESTION = "What do my notes say about self-attention?";

let dataDir: string;
let env: Record<string, string>;
let embedded: ServerProcess | undefined;
let second: ServerProcess | undefined;
let database: TestDatabase | undefined;
let studio: ChildProcess | undefined;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-first-start-"));
  // A fresh clone's environment: no DATABASE_URL, no secret, no model; the data directory in a scratch place.
  env = {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: process.env["HOME"] ?? os.tmpdir(),
    WARRANT_DATA_DIR: dataDir,
    WARRANT_CALENDAR_DATA: path.join(dataDir, "calendar.json"),
    HOST: "127.0.0.1",
    PORT: "0",
  };
  database = await createTestDatabase();
}, 120_000);

afterAll(async () => {
  await stopGroup(studio);
  await second?.kill();
  await embedded?.kill();
  await database?.drop();
  await fs.rm(dataDir, { recursive: true, force: true });
}, 60_000);

function chat(args: string[]): Promise<Finished> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/chat.ts", ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return outputOf(child);
}

async function readJson(file: string): Promise<{ url: string; pid: number; database: string } | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, "utf8")) as { url: string; pid: number; database: string };
  } catch {
    return undefined;
  }
}

/** A copy of langgraph.json outside the checkout (`langgraphjs dev` writes beside its config). */
async function studioConfig(directory: string): Promise<string> {
  const config = JSON.parse(await fs.readFile(path.join(REPO_ROOT, "langgraph.json"), "utf8")) as {
    graphs: Record<string, string>;
    auth: { path: string };
    http?: { app?: string };
  };
  const relocate = (spec: string) => {
    const [file = "", symbol = ""] = spec.split(":");
    return `${path.relative(directory, path.resolve(REPO_ROOT, file))}:${symbol}`;
  };
  const file = path.join(directory, "langgraph.json");
  await fs.writeFile(
    file,
    JSON.stringify({
      ...config,
      graphs: Object.fromEntries(Object.entries(config.graphs).map(([id, spec]) => [id, relocate(spec)])),
      auth: { ...config.auth, path: relocate(config.auth.path) },
      ...(config.http?.app ? { http: { ...config.http, app: relocate(config.http.app) } } : {}),
    }),
  );
  return file;
}

function startStudio(configFile: string, port: number): { child: ChildProcess; output: () => string } {
  let output = "";
  const child = spawn("npm", ["run", "-s", "dev", "--", "--no-reload", "--config", configFile], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...env, PORT: String(port), WARRANT_PLANNER: "rules" },
  });
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

describe("a second npm start on a Postgres server, then the CLI and Studio on the embedded database", () => {
  const embeddedFile = () => runtimeFilePath(dataDir, databaseIdentity({ databaseUrl: undefined, dataDir }));

  it(
    "the second server keeps its own runtime file; stopping it leaves the embedded server's, and the CLI goes through it",
    async () => {
      embedded = await spawnServer(env);
      expect(embeddedFile()).toBe(path.join(dataDir, "server.json"));
      expect(await readJson(embeddedFile())).toMatchObject({ url: embedded.url, pid: embedded.pid });

      const url = database?.url ?? "";
      second = await spawnServer({ ...env, DATABASE_URL: url });
      const secondFile = runtimeFilePath(dataDir, databaseIdentity({ databaseUrl: url, dataDir }));
      expect(await readJson(secondFile)).toMatchObject({ url: second.url, pid: second.pid });
      expect(await readJson(embeddedFile())).toMatchObject({ url: embedded.url, pid: embedded.pid });
      // No password on disk: the file names the database by a hash.
      expect(await fs.readFile(secondFile, "utf8")).not.toContain(url);

      second.signal("SIGTERM");
      expect((await second.exited).code).toBe(0);
      expect(await readJson(secondFile)).toBeUndefined();
      expect(await readJson(embeddedFile())).toMatchObject({ url: embedded.url, pid: embedded.pid });

      const answered = await chat(["--user", "alice", "--json", QUESTION]);
      expect(answered.code, answered.stderr).toBe(0);
      expect(answered.stderr).not.toMatch(/database_unreachable/);
      const output = JSON.parse(answered.stdout.trim().split("\n").at(-1) ?? "null") as {
        thread_id: string;
        run_id: string;
        status: string;
      };
      expect(output.status).toBe("completed");
      // The run is the embedded server's: its API knows the id the CLI printed.
      const secret = await loadApiSecret({ configured: undefined, dataDir });
      const principals = await loadPrincipalDirectory(path.join(REPO_ROOT, "src/domains/dev-principals.json"));
      const token = await mintApiToken(secret, findPrincipal(principals, "alice"));
      const run = await fetch(`${embedded.url}/threads/${output.thread_id}/runs/${output.run_id}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(run.status).toBe(200);
      expect(await run.json()).toMatchObject({ run_id: output.run_id, status: "success" });
    },
    TIMEOUT_MS,
  );

  it(
    "Studio beside npm start on the embedded database refuses at start in one line; after it stops, Studio works",
    async () => {
      const directory = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-first-studio-"));
      try {
        const configFile = await studioConfig(directory);
        const refused = startStudio(configFile, await freePort());
        const exit = await new Promise<number | null>((resolve) => refused.child.on("exit", resolve));
        expect(exit).toBe(1);
        const lines = warrantLines(refused.output());
        expect(lines).toEqual([
          expect.stringMatching(
            new RegExp(
              `^warrant: database_unreachable: the embedded database in .* is in use by process ${embedded?.pid} `,
            ),
          ),
        ]);

        embedded?.signal("SIGTERM");
        expect((await embedded?.exited)?.code).toBe(0);
        expect(await readJson(embeddedFile())).toBeUndefined();

        const port = await freePort();
        const started = startStudio(configFile, port);
        studio = started.child;
        const apiUrl = `http://127.0.0.1:${port}`;
        const ready = await until(async () => {
          if (started.child.exitCode !== null) throw new Error(`npm run dev exited:\n${started.output().slice(-4000)}`);
          try {
            return (await fetch(`${apiUrl}/info`)).ok;
          } catch {
            return false;
          }
        }, 150_000);
        expect(ready, started.output().slice(-4000)).toBe(true);
        const secret = await loadApiSecret({ configured: undefined, dataDir });
        const principals = await loadPrincipalDirectory(path.join(REPO_ROOT, "src/domains/dev-principals.json"));
        const token = await mintApiToken(secret, findPrincipal(principals, "alice"));
        const client = new Client({ apiUrl, apiKey: null, defaultHeaders: { Authorization: `Bearer ${token}` } });
        const thread = await client.threads.create();
        const values = (await client.runs.wait(thread.thread_id, "agent", {
          input: { messages: [{ role: "user", content: QUESTION }] },
        })) as { status?: string; __error__?: { message?: string } };
        expect(values.__error__?.message ?? "", started.output().slice(-4000)).not.toMatch(/^\s*\{/);
        expect(values.status, JSON.stringify(values).slice(0, 2000)).toBe("completed");
      } finally {
        await stopGroup(studio);
        await fs.rm(directory, { recursive: true, force: true });
      }
    },
    TIMEOUT_MS,
  );
});
