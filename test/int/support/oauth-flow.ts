/**
 * The per-user OAuth scenario's setting (oauth-flow.test.ts, and oauth-flow-modern.test.ts on 2026-07-28): the
 * test's own authorization server and OAuth-protected MCP server on loopback (oauth-servers.ts), Warrant's real
 * server on a fresh database with a planner that calls the protected tool, and what the tests do as a browser and
 * as each user. `useOAuthFlow` starts it for the calling test file; the bindings below are live once it has.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";
import { beforeAll } from "vitest";
import { useSandbox } from "../../support/sandbox.js";
import { mintApiToken } from "../../../src/auth/api-token.js";
import { createOAuthTokenStore } from "../../../src/stores/oauth-token-store.js";
import { findPrincipal, loadPrincipalDirectory } from "../../../src/auth/principal.js";
import { loadSettings } from "../../../src/env.js";
import { HOST_OWNER, type Authorize } from "../../../src/oauth/authorization.js";
import { stateKeyFrom } from "../../../src/oauth/state.js";
import { connectTools, type ToolHost } from "../../../src/mcp/tool-host.js";
import { openDatabase, type Database } from "../../../src/stores/open-database.js";
import type { Planner } from "../../../src/planners/planner.js";
import { parseConfig } from "../../../src/policy/config.js";
import { startServer, type StartedServer } from "../../../src/server/server.js";
import { startOAuthServers, ticketsServer, WHOAMI_CONTRACT, type OAuthServers } from "./oauth-servers.js";
import { createTestDatabase, type TestDatabase } from "./postgres.js";
import { AuthorizationRequired } from "../../../src/errors.js";

export let oauth: OAuthServers;
export let db: TestDatabase;
export let database: Database;
export let host: ToolHost;
export let server: StartedServer;
export let dataDir: string;
export const logLines: string[] = [];
export const DEADLINE_MS = 8_000;
/** What the planner was shown, turn by turn (what a model would be sent). */
export const plannerInputs: string[] = [];
export const secretHex = randomBytes(32).toString("hex");
export const secret = Uint8Array.from(Buffer.from(secretHex, "hex"));
/** Every access and refresh token the authorization server issued to an owner (checked against every dump). */
export const issued = new Set<string>();

export async function tokensOf(owner: string) {
  const tokens = (await createOAuthTokenStore(database.pool, database.schema, secret).load(owner, "tickets")).tokens;
  for (const token of [tokens?.access_token, tokens?.refresh_token]) if (token) issued.add(token);
  return tokens;
}

/** Only the deployment's own listing is consented without a user (as an operator would set it up). */
export const hostConsents: Authorize = async ({ server: name, owner, url }) => {
  if (owner !== HOST_OWNER) throw new AuthorizationRequired(name, owner, url.href);
  return codeFrom(url.href).then((answer) => answer.code);
};

/** Visits the authorization URL as a signed-in, consenting browser does: the code and state it is sent back with. */
export async function codeFrom(url: string): Promise<{ code: string; state: string; location: URL }> {
  const response = await fetch(url, { redirect: "manual" });
  await response.body?.cancel().catch(() => undefined);
  const location = new URL(response.headers.get("location") ?? "", url);
  const code = location.searchParams.get("code");
  if (!code) throw new Error(`no code (HTTP ${response.status})`);
  return { code, state: location.searchParams.get("state") ?? "", location };
}

/** Calls `whoami` (or, asked to file a ticket, `file_ticket`) once, then answers. */
export const planner: Planner = {
  kind: "scripted",
  async plan(input) {
    plannerInputs.push(JSON.stringify({ messages: input.messages, tools: input.tools, evidence: input.evidence }));
    const done = input.messages.some((message) => message.getType() === "tool");
    const usage = { input_tokens: 0, output_tokens: 0 };
    if (done) return { outcome: { type: "final", answer: "Checked.", citations: [], abstained: false }, usage };
    const filing = /\bfile\b/.test(input.request);
    const call = {
      call_id: `call_${randomBytes(6).toString("hex")}`,
      name: filing ? "file_ticket" : "whoami",
      raw_arguments: filing ? JSON.stringify({ title: "Projector in room 2 is broken" }) : "{}",
    };
    return { outcome: { type: "tool_calls", calls: [call] }, usage };
  },
};

export async function clientOf(user: string): Promise<{ client: Client; token: string }> {
  const settings = loadSettings({ WARRANT_DATA_DIR: dataDir });
  const principal = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), user);
  const token = await mintApiToken(secret, principal);
  return { client: new Client({ apiUrl: server.url, defaultHeaders: { Authorization: `Bearer ${token}` } }), token };
}

export const callback = (token: string | undefined, body: unknown) =>
  fetch(`${server.url}/oauth/callback`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });

export interface AuthorizationAsk {
  server: string;
  authorization_url: string;
  expires_at: string;
  action_ids: string[];
}

/** Starts a run as `user` and waits for it to pause or end; the pause's authorization asks. */
export async function runAs(client: Client, content = "Use the tickets server to check who I am") {
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, "agent", { input: { messages: [{ role: "user", content }] } });
  return { thread_id: thread.thread_id, ...(await asksOf(client, thread.thread_id)) };
}

export async function asksOf(client: Client, threadId: string) {
  const state = await client.threads.getState(threadId);
  const values = state.values as { status?: string };
  const asks = state.tasks.flatMap((task) =>
    task.interrupts.flatMap((entry) => {
      const value = entry.value as { authorization_required?: AuthorizationAsk[] };
      return value.authorization_required ?? [];
    }),
  );
  return { status: values.status, asks };
}

export async function settled(client: Client, threadId: string) {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const runs = await client.runs.list(threadId);
    if (runs.every((run) => run.status !== "pending" && run.status !== "running")) return asksOf(client, threadId);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the resumed run did not finish");
}

/** Starts the setting for the calling test file: `modern` serves 2026-07-28 too, `protocol` pins the revision. */
export function useOAuthFlow(options: { modern?: boolean; protocol?: "2026-07-28" | "2025-11-25" } = {}): void {
  const fixture = useSandbox();
  beforeAll(async () => {
    oauth = fixture.add(await startOAuthServers({ modern: options.modern }));
    db = fixture.add(await createTestDatabase());
    dataDir = await fixture.tempDir("warrant-oauth-flow-");
    database = fixture.add(await openDatabase({ databaseUrl: db.url, dataDir }));
    const config = parseConfig(
      JSON.stringify({
        servers: {
          tickets: { ...ticketsServer(oauth.mcpUrl), ...(options.protocol ? { protocol: options.protocol } : {}) },
        },
        tools: {
          whoami: WHOAMI_CONTRACT,
          file_ticket: {
            server: "tickets",
            risk: "write_reversible",
            timeout_ms: 10_000,
            max_attempts: 1,
            injected: { idempotency_key: "action.idempotency_key" },
          },
        },
      }),
    );
    host = fixture.add(
      await connectTools(config, undefined, {
        oauth: {
          store: createOAuthTokenStore(database.pool, database.schema, secret),
          stateKey: stateKeyFrom(secret),
          authorize: hostConsents,
        },
      }),
    );
    const settings = loadSettings({
      DATABASE_URL: db.url,
      WARRANT_DATA_DIR: dataDir,
      WARRANT_AUTH_SECRET: secretHex,
      // Short, so that the owner's time at the authorization server would stop the run if it counted.
      WARRANT_DEADLINE_MS: String(DEADLINE_MS),
      PORT: "0",
      HOST: "127.0.0.1",
    });
    server = fixture.add(
      await startServer({
        settings,
        overrides: { planner, tools: host },
        log: (line) => void logLines.push(line),
        heartbeatMs: 100,
      }),
    );
  }, 120_000);
}
