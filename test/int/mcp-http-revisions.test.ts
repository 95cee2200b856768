/**
 * Both MCP revisions over Streamable HTTP, with a real server process the
 * host launches (test/int/support/http-revisions-server.ts, behind task
 * tokens): the host negotiates 2026-07-28 where the server answers
 * `server/discover`, else 2025-11-25, or follows the config's pin. On each
 * revision a read and a write carry the caller's own task token (the server
 * reads tenant, subject and task from it), the write's effect is one entry,
 * and the attempt's `traceparent` arrives in the call's `_meta`. An HTTP
 * refusal is the same typed code on both revisions.
 */
import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import type { ElicitationBroker, ElicitationQuestion } from "../../src/elicitation/client.js";
import type { PinStore } from "../../src/mcp/pins.js";
import { connectTools, type CallOptions, type ToolHost } from "../../src/mcp/tool-host.js";
import { renderToolStatus, toolStatus } from "../../src/mcp/tool-report.js";
import { parseConfig, type WarrantConfig } from "../../src/policy/config.js";
import { traceparentOf } from "../../src/trace-ids.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { agentHarness, principal } from "./support/agent.js";
import { APPROVE } from "./support/calendar.js";
import { backends, useBackend } from "./support/postgres.js";

const TEST_TIMEOUT_MS = 120_000;
const RUN_ID = "5f0c2a4e-1d7b-4c55-9a0e-6b3e2f1d9c01";
/** No tool pinned yet: the report's revision column is what this test reads. */
const NO_PINS: PinStore = { check: async () => [], get: async () => undefined, approve: async () => undefined };

/**
 * The test server launched by the host, serving `revisions` (empty: both), pinned to `protocol` when given;
 * `elicitation`: the server may ask users, and its `consent_page` (2026-07-28 only) is contracted.
 */
function revisionsConfig(entries: string, revisions: string, protocol?: string, elicitation = false): WarrantConfig {
  const tool = (risk: string) => ({ server: "revisions", risk });
  const eliciting = elicitation ? { elicitation: true } : {};
  return parseConfig(
    JSON.stringify({
      servers: {
        revisions: {
          transport: "http",
          audience: "revisions",
          launch: {
            command: "node",
            args: ["--import", "tsx", "test/int/support/http-revisions-server.ts"],
            env: {
              WARRANT_MCP_REVISIONS: revisions,
              WARRANT_HTTP_ENTRIES: entries,
              WARRANT_HTTP_REFUSE_SUBJECT: "dana",
              WARRANT_HTTP_STARTS: `${entries}.starts`,
            },
          },
          ...(protocol ? { protocol } : {}),
          ...eliciting,
        },
      },
      tools: {
        ...(elicitation ? { consent_page: tool("read") } : {}),
        whoami: tool("read"),
        pid: tool("read"),
        refuse: tool("read"),
        entry_status: tool("read"),
        add_entry: {
          ...tool("write_reversible"),
          max_attempts: 1,
          injected: { idempotency_key: "action.idempotency_key" },
          reconcile: { tool: "entry_status", key_argument: "idempotency_key" },
        },
      },
    }),
    "http revisions test config",
  );
}

async function entriesIn(file: string): Promise<Record<string, unknown>[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function callTool(tools: ToolHost, name: string, args: Record<string, unknown>, options: CallOptions) {
  const tool = tools.catalog().find((entry) => entry.name === name) ?? expect.fail(`${name} not listed`);
  return tools.call(tool, args, options);
}

describe.each([
  ["both revisions, unpinned", "", undefined, "2026-07-28", "modern"],
  ["2025-11-25 only (a v1 SDK server), unpinned", "2025-11-25", undefined, "2025-11-25", "v1"],
  ["both revisions, pinned to 2025-11-25", "", "2025-11-25", "2025-11-25", "legacy"],
  ["both revisions, pinned to 2026-07-28", "", "2026-07-28", "2026-07-28", "modern"],
  ["2026-07-28 only, unpinned", "2026-07-28", undefined, "2026-07-28", "modern"],
])("an HTTP server serving %s", (_label, revisions, protocol, expected, era) => {
  const fixture = useSandbox("all", TEST_TIMEOUT_MS);

  it(
    "speaks the expected revision; a read and a write carry the caller's task token and the call's traceparent",
    async () => {
      const entries = path.join(await fixture.tempDir("http-revisions-"), "entries.jsonl");
      const config = revisionsConfig(entries, revisions, protocol);
      const tools = fixture.add(await connectTools(config, undefined, {}));
      expect(tools.revision?.("revisions")).toBe(expected);
      expect(tools.isHealthy("revisions")).toBe(true);
      // What `npm run tools -- list` and /operator/tools show.
      const rows = await toolStatus(config, NO_PINS, tools);
      expect(rows.map((row) => [row.tool, row.listed, row.revision])).toEqual(
        ["add_entry", "entry_status", "pid", "refuse", "whoami"].map((tool) => [tool, true, expected]),
      );
      expect(renderToolStatus(rows)).toContain(expected);
      // Negotiation probes the launched server it then speaks to: one process, however the revision was decided.
      expect(await entriesIn(`${entries}.starts`)).toHaveLength(1);

      const alice: CallOptions = {
        timeoutMs: 20_000,
        principal: await principal("alice"),
        threadId: "http-revisions-thread",
      };
      const read = await callTool(
        tools,
        "whoami",
        {},
        { ...alice, record: { call_id: "c1", run_id: RUN_ID, attempt: 1 } },
      );
      if (!read.ok) throw new Error(`whoami failed: ${read.code}`);
      expect(JSON.parse(read.text ?? "{}")).toEqual({
        tenant: alice.principal.tenant,
        subject: alice.principal.user_id,
        task: "http-revisions-thread",
        traceparent: traceparentOf(RUN_ID, "c1", 1),
        era,
      });
      // A call outside a run's attempt carries no trace context.
      const untraced = await callTool(tools, "whoami", {}, alice);
      expect(untraced.ok && JSON.parse(untraced.text ?? "{}").traceparent).toBeNull();

      // Concurrent calls of two users (one client on 2026-07-28) each travel under their own token.
      const gil: CallOptions = { ...alice, principal: await principal("gil"), threadId: "gil-thread" };
      const both = await Promise.all([alice, gil, alice, gil].map((options) => callTool(tools, "whoami", {}, options)));
      expect(both.map((result) => result.ok && JSON.parse(result.text ?? "{}").subject)).toEqual([
        alice.principal.user_id,
        gil.principal.user_id,
        alice.principal.user_id,
        gil.principal.user_id,
      ]);

      const write = await callTool(tools, "add_entry", { text: "one" }, alice);
      expect(write.ok).toBe(true);
      expect(await entriesIn(entries)).toEqual([
        { text: "one", era, tenant: alice.principal.tenant, subject: alice.principal.user_id, task: alice.threadId },
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "fails the same typed codes on either revision: a refused token, a server's verdict, a killed server; then reconnects",
    async () => {
      const entries = path.join(await fixture.tempDir("http-revisions-"), "entries.jsonl");
      const tools = fixture.add(await connectTools(revisionsConfig(entries, revisions, protocol), undefined, {}));
      const alice: CallOptions = { timeoutMs: 20_000, principal: await principal("alice"), threadId: "t-failures" };
      const dana: CallOptions = { ...alice, principal: await principal("dana") };
      const refused = await callTool(tools, "whoami", {}, dana);
      expect(refused.ok ? "ok" : refused.code).toBe("protocol_error");
      const verdict = await callTool(tools, "refuse", {}, alice);
      // A handler's thrown error is a tool error result on both SDKs, not a JSON-RPC error.
      expect(verdict.ok ? "ok" : verdict.code).toBe("tool_failed");

      const pid = await callTool(tools, "pid", {}, alice);
      if (!pid.ok) throw new Error(`pid failed: ${pid.code}`);
      process.kill((JSON.parse(pid.text ?? "{}") as { pid: number }).pid, "SIGKILL");
      await waitFor(() => !tools.isHealthy("revisions"));
      const down = await callTool(tools, "whoami", {}, alice);
      expect(down.ok ? "ok" : down.code).toBe("server_unavailable");
      // The supervisor relaunches it and speaks the same revision again.
      await waitFor(() => tools.isHealthy("revisions"));
      expect(tools.revision?.("revisions")).toBe(expected);
      const again = await callTool(tools, "whoami", {}, alice);
      expect(again.ok && JSON.parse(again.text ?? "{}").era).toBe(era);
    },
    TEST_TIMEOUT_MS,
  );
});

describe.each(["2026-07-28", "2025-11-25"])("an approved write through the graph on HTTP, %s", (revision) => {
  const backend = backends[0];
  if (!backend) throw new Error("no Postgres backend");
  const opened = useBackend(backend, TEST_TIMEOUT_MS);
  const fixture = useSandbox("all", TEST_TIMEOUT_MS);

  it(
    "adds exactly one entry under the owner's task token and records one succeeded write",
    async () => {
      const entries = path.join(await fixture.tempDir("http-revisions-"), "entries.jsonl");
      const tools = fixture.add(await connectTools(revisionsConfig(entries, "", revision), undefined, {}));
      expect(tools.revision?.("revisions")).toBe(revision);
      const planner = scriptedPlanner([
        calls(proposal("add_entry", { text: "graph" })),
        { type: "final", answer: "Done.", citations: [], abstained: false },
      ]);
      const agent = agentHarness({ database: opened().database, tools, planner });
      const { threadId, state: paused } = await agent.run("alice", "Add an entry saying graph");
      expect(paused.status).toBe("waiting_approval");
      expect(await entriesIn(entries)).toEqual([]);
      const state = await agent.resume("alice", threadId, APPROVE);
      planner.assertDone();
      expect(state.status).toBe("completed");
      const writes = (await opened().database.ledger.list(threadId)).filter((row) => row.tool === "add_entry");
      expect(writes.map((row) => [row.attempt, row.status, row.error_code])).toEqual([[1, "succeeded", null]]);
      const alice = await principal("alice");
      expect(await entriesIn(entries)).toEqual([
        {
          text: "graph",
          era: revision === "2026-07-28" ? "modern" : "legacy",
          tenant: alice.tenant,
          subject: alice.user_id,
          task: threadId,
          idempotency_key: writes[0]?.idempotency_key,
        },
      ]);
    },
    TEST_TIMEOUT_MS,
  );
});

describe("a server pinned to 2026-07-28 that speaks only 2025-11-25", () => {
  const fixture = useSandbox("all", TEST_TIMEOUT_MS);
  it(
    "does not start (no silent fallback to 2025-11-25)",
    async () => {
      const entries = path.join(await fixture.tempDir("http-revisions-"), "entries.jsonl");
      const failure = await connectTools(revisionsConfig(entries, "2025-11-25", "2026-07-28"), undefined, {}).then(
        (tools) => fixture.add(tools),
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ name: "ConfigError", code: "mcp_start_failed" });
    },
    TEST_TIMEOUT_MS,
  );
});

async function waitFor(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(50);
  }
}

describe("URL-mode elicitation over HTTP on 2026-07-28", () => {
  const fixture = useSandbox("all", TEST_TIMEOUT_MS);

  it(
    "the owner's consent re-sends the call with accept; a hostile URL is refused and nobody is asked",
    async () => {
      const entries = path.join(await fixture.tempDir("http-revisions-"), "entries.jsonl");
      const asked: ElicitationQuestion[] = [];
      const settled: string[] = [];
      const elicitation: ElicitationBroker = {
        async ask(question) {
          asked.push(question);
          return { action: "accept", content: {} };
        },
        async settled(_question, outcome, detail) {
          settled.push(`${outcome} ${detail}`);
          return undefined;
        },
      };
      const config = revisionsConfig(entries, "2026-07-28", "2026-07-28", true);
      const tools = fixture.add(await connectTools(config, undefined, { elicitation }));
      const alice: CallOptions = { timeoutMs: 20_000, principal: await principal("alice"), threadId: "consent" };
      const url = "https://consent.warrant.test/connect";
      const good = await callTool(tools, "consent_page", { url }, alice);
      expect(good.ok && JSON.parse(good.text ?? "{}")).toEqual({ consent: "accept" });
      expect(asked.map((question) => question.url?.url)).toEqual([url]);
      const hostile = await callTool(tools, "consent_page", { url: "javascript:alert(1)" }, alice);
      expect(hostile.ok && JSON.parse(hostile.text ?? "{}")).toEqual({ consent: "decline" });
      expect(asked).toHaveLength(1);
      expect(settled).toEqual([
        "accept url host consent.warrant.test",
        expect.stringMatching(/^refused elicitation_url_refused: /),
      ]);
    },
    TEST_TIMEOUT_MS,
  );
});
