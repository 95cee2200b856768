/**
 * `npm run dev` end to end: the real command (npm → scripts/dev.mjs →
 * `langgraphjs dev` → the LangGraph API with our auth) as a child process on
 * a free port, its ledger on a throwaway Postgres database, driven over HTTP
 * with `@langchain/langgraph-sdk`'s Client.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadApiSecret, mintApiToken } from "../../src/auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory, type Principal } from "../../src/auth/principal.js";
import { loadSettings, REPO_ROOT } from "../../src/env.js";
import { openDatabase } from "../../src/stores/open-database.js";
import type { State } from "../../src/state.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { freePort } from "../support/ports.js";
import { stopGroup, until } from "./support/processes.js";

const QUESTION = "Compare self-attention with cross-attention using my notes";
const STARTUP_MS = 120_000;

/**
 * A copy of langgraph.json in `directory`: `langgraphjs dev` keeps its storage
 * in `<config dir>/.langgraph_api` and appends to `<config dir>/.gitignore`,
 * and the test must not write into the checkout. Paths stay relative because
 * the API's preload joins the first graph path onto the config directory.
 */
async function writeStudioConfig(directory: string): Promise<string> {
  const config = JSON.parse(await fs.readFile(path.join(REPO_ROOT, "langgraph.json"), "utf8")) as {
    graphs: Record<string, string>;
    auth: { path: string; disable_studio_auth: boolean };
    http?: { app?: string };
  };
  const relocate = (spec: string) => {
    const [file = "", symbol = ""] = spec.split(":");
    return `${path.relative(directory, path.resolve(REPO_ROOT, file))}:${symbol}`;
  };
  const copy = {
    ...config,
    graphs: Object.fromEntries(Object.entries(config.graphs).map(([id, spec]) => [id, relocate(spec)])),
    auth: { ...config.auth, path: relocate(config.auth.path) },
    ...(config.http?.app ? { http: { ...config.http, app: relocate(config.http.app) } } : {}),
  };
  const file = path.join(directory, "langgraph.json");
  await fs.writeFile(file, JSON.stringify(copy, null, 2));
  return file;
}

/** The environment of `npm run dev`: ours only, nothing inherited that names a user, a model or a port. */
function devEnvironment(extra: Record<string, string>): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (
      value === undefined ||
      /^(WARRANT_|OPENAI_|LANGSMITH_|LANGCHAIN_|LANGGRAPH_)|^(PORT|HOST|DATABASE_URL)$/.test(key)
    )
      continue;
    environment[key] = value;
  }
  return { ...environment, WARRANT_PLANNER: "rules", ...extra };
}

function statusOf(error: unknown): number | undefined {
  return typeof error === "object" && error !== null && "status" in error && typeof error.status === "number"
    ? error.status
    : undefined;
}

async function rejectionStatus(promise: Promise<unknown>): Promise<number | undefined> {
  try {
    await promise;
  } catch (error) {
    return statusOf(error);
  }
  return undefined;
}

describe("npm run dev (langgraphjs dev with Warrant auth)", () => {
  let directory: string;
  let database: TestDatabase;
  let child: ChildProcess | undefined;
  let output = "";
  let apiUrl: string;
  let secret: Uint8Array;
  let principals: Map<string, Principal>;
  const tokens: Record<"alice" | "bob", string> = { alice: "", bob: "" };
  const clientFor = (token: string, headers: Record<string, string> = {}) =>
    new Client({ apiUrl, apiKey: null, defaultHeaders: { Authorization: `Bearer ${token}`, ...headers } });

  beforeAll(async () => {
    directory = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-studio-"));
    database = await createTestDatabase();
    const configFile = await writeStudioConfig(directory);
    const secretHex = randomBytes(32).toString("hex");
    secret = await loadApiSecret({ configured: secretHex, dataDir: directory });
    principals = await loadPrincipalDirectory(loadSettings().principalsPath);
    tokens.alice = await mintApiToken(secret, findPrincipal(principals, "alice"));
    tokens.bob = await mintApiToken(secret, findPrincipal(principals, "bob"));

    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    // PORT through the environment, as a developer would; HOST left to its default (127.0.0.1).
    child = spawn("npm", ["run", "-s", "dev", "--", "--no-reload", "--config", configFile], {
      cwd: REPO_ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: devEnvironment({
        PORT: String(port),
        WARRANT_AUTH_SECRET: secretHex,
        DATABASE_URL: database.url,
        WARRANT_DATA_DIR: path.join(directory, "data"),
      }),
    });
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const started = child;
    const ready = await until(async () => {
      if (started.exitCode !== null)
        throw new Error(`npm run dev exited with ${started.exitCode}:\n${output.slice(-4000)}`);
      try {
        return (await fetch(`${apiUrl}/info`)).ok;
      } catch {
        return false;
      }
    }, STARTUP_MS - 5_000);
    if (!ready) throw new Error(`npm run dev did not answer /info:\n${output.slice(-4000)}`);
  }, STARTUP_MS);

  afterAll(async () => {
    try {
      if (child) await stopGroup(child);
    } finally {
      await database?.drop();
      if (directory) await fs.rm(directory, { recursive: true, force: true });
    }
  }, 40_000);

  it("wires our auth in langgraph.json with Studio's anonymous bypass disabled", async () => {
    const config = JSON.parse(await fs.readFile(path.join(REPO_ROOT, "langgraph.json"), "utf8")) as { auth?: unknown };
    expect(config.auth).toEqual({ path: "./src/server/studio-auth.ts:auth", disable_studio_auth: true });
  });

  it("answers /info without a token, with LangSmith tracing off", async () => {
    const response = await fetch(`${apiUrl}/info`);
    expect(response.status).toBe(200);
    const info = (await response.json()) as { flags?: { langsmith?: boolean } };
    expect(info.flags?.langsmith).toBe(false);
  });

  it.each([
    ["no Authorization header", {}, "token_missing"],
    ["Studio's x-auth-scheme: langsmith without a token", { "x-auth-scheme": "langsmith" }, "token_missing"],
    ["a non-Bearer scheme", { authorization: "Basic YWxpY2U6YWxpY2U=" }, "token_malformed"],
    ["a token that is not a JWT", { authorization: "Bearer not-a-token" }, "token_malformed"],
  ])("refuses %s with 401 and a typed JSON error", async (_case, headers: Record<string, string>, code) => {
    const response = await fetch(`${apiUrl}/assistants/search`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: "{}",
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect(await response.json()).toMatchObject({ error: code });
  });

  it("refuses tampered and expired tokens with 401", async () => {
    const [header, payload, signature = ""] = tokens.alice.split(".");
    const forgedPayload = Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(payload ?? "", "base64url").toString()),
        sub: "sam",
        scopes: ["notes:read_unreleased"],
      }),
    ).toString("base64url");
    const expired = await mintApiToken(secret, findPrincipal(principals, "alice"), {
      ttlSeconds: 60,
      now: Date.now() - 3_600_000,
    });
    for (const [token, code] of [
      [`${header}.${forgedPayload}.${signature}`, "token_invalid"],
      [expired, "token_expired"],
    ] as const) {
      const response = await fetch(`${apiUrl}/threads/search`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: "{}",
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: code });
    }
  });

  it("refuses the dev server's store and its internal truncate route", async () => {
    const headers = { "content-type": "application/json", authorization: `Bearer ${tokens.alice}` };
    const truncate = await fetch(`${apiUrl}/internal/truncate`, {
      method: "POST",
      headers,
      body: JSON.stringify({ threads: true }),
    });
    expect(truncate.status).toBe(403);
    const store = await fetch(`${apiUrl}/store/items/search`, {
      method: "POST",
      headers,
      body: JSON.stringify({ namespace_prefix: [] }),
    });
    expect(store.status).toBe(403);
  });

  it("lists the agent and workflow assistants with their schemas", async () => {
    const client = clientFor(tokens.alice);
    const assistants = await client.assistants.search({ limit: 10 });
    expect(assistants.map((assistant) => assistant.graph_id).sort()).toEqual(["agent", "workflow"]);
    for (const assistant of assistants) {
      const schemas = await client.assistants.getSchemas(assistant.assistant_id);
      expect(schemas.graph_id).toBe(assistant.graph_id);
      expect(schemas.input_schema).toMatchObject({ type: "object" });
      expect(schemas.state_schema).toMatchObject({ type: "object" });
    }
    // The first request per graph parses its TypeScript in a worker: 10-40 s on two busy cores.
  }, 180_000);

  describe("runs", () => {
    let aliceThread: string;
    let aliceState: State;

    beforeAll(async () => {
      const alice = clientFor(tokens.alice);
      // A client-chosen owner is replaced by the authenticated one.
      aliceThread = (await alice.threads.create({ metadata: { owner: "bob", tenant: "acme" } })).thread_id;
      aliceState = (await alice.runs.wait(aliceThread, "agent", {
        input: { messages: [{ role: "user", content: QUESTION }] },
      })) as unknown as State;
    }, 90_000);

    it("runs alice's question to an answer citing her cs301 notes, ledger in Postgres", async () => {
      expect(aliceState.status).toBe("completed");
      expect(aliceState.run?.owner).toBe("alice");
      const citations = aliceState.result?.citations ?? [];
      expect(citations.length).toBeGreaterThan(0);
      for (const citation of citations) expect(citation.source_id.startsWith("cs301/")).toBe(true);
      const alice = clientFor(tokens.alice);
      expect((await alice.threads.get(aliceThread)).metadata).toMatchObject({ owner: "alice", tenant: "uni" });
      // Her own metadata update cannot give the thread away either.
      const updated = await alice.threads.update(aliceThread, {
        metadata: { owner: "bob", tenant: "acme", topic: "attention" },
      });
      expect(updated.metadata).toMatchObject({ owner: "alice", tenant: "uni", topic: "attention" });
      // The graph's ledger went to DATABASE_URL: the same rows as the state.
      const ledgerDatabase = await openDatabase({ databaseUrl: database.url, dataDir: directory });
      try {
        const rows = await ledgerDatabase.ledger.list(aliceThread);
        expect(rows.length).toBe(aliceState.ledger.length);
        expect(rows.length).toBeGreaterThan(0);
      } finally {
        await ledgerDatabase.close();
      }
    });

    it("shows bob none of alice's thread: 404 on read, state, history, run, update and delete; absent from search", async () => {
      const bob = clientFor(tokens.bob);
      expect(await rejectionStatus(bob.threads.get(aliceThread))).toBe(404);
      expect(await rejectionStatus(bob.threads.getState(aliceThread))).toBe(404);
      expect(await rejectionStatus(bob.threads.getHistory(aliceThread))).toBe(404);
      expect(await rejectionStatus(bob.runs.list(aliceThread))).toBe(404);
      expect(await rejectionStatus(bob.threads.update(aliceThread, { metadata: { owner: "bob" } }))).toBe(404);
      expect(
        await rejectionStatus(
          bob.runs.wait(aliceThread, "agent", { input: { messages: [{ role: "user", content: QUESTION }] } }),
        ),
      ).toBe(404);
      expect(await rejectionStatus(bob.threads.delete(aliceThread))).toBe(404);
      expect((await bob.threads.search({ limit: 100 })).map((thread) => thread.thread_id)).not.toContain(aliceThread);
      // Still there, still alice's.
      expect((await clientFor(tokens.alice).threads.get(aliceThread)).metadata).toMatchObject({
        owner: "alice",
        tenant: "uni",
      });
    });

    it("runs as the token's user whatever configurable, context and x-* headers claim", async () => {
      const alicePrincipal = findPrincipal(principals, "alice");
      const claimed = {
        ...alicePrincipal,
        identity: "uni:alice",
        permissions: alicePrincipal.scopes,
        is_authenticated: true,
      };
      const bob = clientFor(tokens.bob, {
        "x-auth-scheme": "langsmith",
        "x-user-id": "alice",
        "x-langgraph-auth-user": JSON.stringify(claimed),
      });
      const thread = (await bob.threads.create()).thread_id;
      const state = (await bob.runs.wait(thread, "agent", {
        input: { messages: [{ role: "user", content: QUESTION }] },
        config: {
          configurable: {
            langgraph_auth_user: claimed,
            langgraph_auth_user_id: "uni:alice",
            user_id: "uni:alice",
            langsmith_project: "elsewhere",
          },
        },
        context: { langgraph_auth_user: claimed },
      })) as unknown as State;
      // Bob is not enrolled in cs301: his run abstains and sees none of it.
      expect(state.run?.owner).toBe("bob");
      expect(state.status).toBe("abstained");
      expect(state.result?.citations).toEqual([]);
      expect(state.evidence.filter((item) => item.source_id.startsWith("cs301/"))).toEqual([]);
      // What the run was configured with: bob's principal, no client x-* keys, no LangSmith tracing.
      const [run] = await bob.runs.list(thread);
      const configurable = (run as unknown as { kwargs: { config: { configurable: Record<string, unknown> } } }).kwargs
        .config.configurable;
      expect(configurable["langgraph_auth_user"]).toMatchObject({
        user_id: "bob",
        identity: "uni:bob",
        grants: { courses: ["db201"] },
      });
      expect(configurable["langgraph_auth_user_id"]).toBe("uni:bob");
      expect(configurable["user_id"]).toBe("uni:bob");
      expect(Object.keys(configurable).filter((key) => key.startsWith("x-") || key.startsWith("langsmith_"))).toEqual(
        [],
      );
    }, 60_000);

    it("answers a run that fails with one error object whose message is a sentence, not JSON inside JSON", async () => {
      const thread = (await clientFor(tokens.alice).threads.create()).thread_id;
      // Messages that are no messages: the graph throws; langgraph-api would serialise that error twice.
      const response = await fetch(`${apiUrl}/threads/${thread}/runs/wait`, {
        method: "POST",
        headers: { authorization: `Bearer ${tokens.alice}`, "content-type": "application/json" },
        body: JSON.stringify({ assistant_id: "agent", input: { messages: 42 } }),
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { __error__?: { error?: unknown; message?: unknown } };
      expect(body.__error__).toEqual({ error: expect.any(String), message: expect.any(String) });
      expect(String(body.__error__?.message)).not.toMatch(/^\s*\{/);
      expect(String(body.__error__?.message)).toMatch(/coerce/i);
    }, 60_000);
  });
});
