/**
 * Reconciliation of writes whose outcome is unknown (DESIGN §6, §9), in
 * memory: the execute node against a scripted calendar-like tool host, the
 * pure helpers, the contract validation and the plan node's stop rule.
 * The real calendar server, Postgres and the whole graph are exercised in
 * test/int/calendar-reconcile.test.ts.
 */
import { describe, expect, it } from "vitest";
import shipped from "../../warrant.config.json" with { type: "json" };
import { isConfigError } from "../../src/errors.js";
import { buildCatalog, type ListedTool } from "../../src/mcp/catalog.js";
import type { NormalizedResult } from "../../src/mcp/normalize.js";
import type { ToolHost } from "../../src/mcp/tool-host.js";
import { makeExecuteNode } from "../../src/nodes/execute.js";
import { unresolvedWrites } from "../../src/graph/stop-conditions.js";
import { parseConfig } from "../../src/policy/config.js";
import { ToolContractSchema } from "../../src/policy/contracts.js";
import type { Decision } from "../../src/policy/decision.js";
import { actionFingerprint } from "../../src/policy/fingerprint.js";
import type { LedgerRow } from "../../src/state/ledger.js";
import { effectUnknown, readStatus, statusArguments } from "../../src/execution/reconcile.js";
import { ZERO_USAGE } from "../../src/policy/usage.js";
import type { CallResult, State } from "../../src/state.js";
import type { UsageUpdate } from "../../src/policy/usage.js";
import { memoryHost } from "../support/memory-host.js";
import { scriptedPlanner } from "../support/scripted-planner.js";

const alice = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["calendar:write", "calendar:read"],
  grants: {},
};
const rita = { user_id: "rita", tenant: "uni", role: "reviewer", scopes: ["approvals:decide"], grants: {} };
const KEY = "wk_0123456789abcdef";
const TIMEOUT: NormalizedResult = { ok: false, code: "tool_timeout", message: "the tool did not answer in time" };
const GONE: NormalizedResult = { ok: false, code: "server_unavailable", message: "the server connection closed" };
const CREATED: NormalizedResult = {
  ok: true,
  text: '{"replayed":false}',
  structured: { event: { event_id: "e1" }, replayed: false },
};
const APPLIED: NormalizedResult = { ok: true, text: "{}", structured: { applied: true, event: { event_id: "e1" } } };
const NOT_APPLIED: NormalizedResult = { ok: true, text: "{}", structured: { applied: false } };

const contracts = {
  create_study_event: ToolContractSchema.parse({
    server: "calendar",
    risk: "write_reversible",
    scopes: ["calendar:write"],
    injected: { user_id: "principal.user_id", idempotency_key: "action.idempotency_key" },
    reconcile: { tool: "get_write_status", key_argument: "idempotency_key" },
  }),
  get_write_status: ToolContractSchema.parse({
    server: "calendar",
    risk: "read",
    scopes: ["calendar:read"],
    max_attempts: 2,
    injected: { user_id: "principal.user_id" },
  }),
};
const listed: Record<string, ListedTool[]> = {
  calendar: [
    {
      name: "create_study_event",
      inputSchema: { type: "object", properties: { user_id: {}, idempotency_key: {}, title: {} } },
    },
    { name: "get_write_status", inputSchema: { type: "object", properties: { user_id: {}, idempotency_key: {} } } },
  ],
};

/** A calendar-like tool host answering each tool from its own script, in order; it records every call. */
function scriptedTools(
  script: Partial<Record<"create_study_event" | "get_write_status", NormalizedResult[]>>,
  options: { withoutRule?: boolean; healthy?: () => boolean; statusTimeoutMs?: number } = {},
) {
  const { tools } = buildCatalog(
    {
      create_study_event: options.withoutRule
        ? { ...contracts.create_study_event, reconcile: undefined }
        : contracts.create_study_event,
      get_write_status: {
        ...contracts.get_write_status,
        timeout_ms: options.statusTimeoutMs ?? contracts.get_write_status.timeout_ms,
      },
    },
    listed,
  );
  const calls: { tool: string; args: Record<string, unknown> }[] = [];
  const host: ToolHost & { calls: typeof calls } = {
    calls,
    maxTools: 8,
    catalog: () => tools,
    isHealthy: options.healthy ?? (() => true),
    isListed: (name) => tools.some((tool) => tool.name === name),
    async call(tool, args) {
      calls.push({ tool: tool.name, args });
      const next = (script[tool.name as keyof typeof script] ?? []).shift();
      if (!next) throw new Error(`unscripted call to ${tool.name}`);
      return next;
    },
    async readResource() {
      return { ok: false, code: "tool_not_permitted", message: "no resources here" };
    },
    async getPrompt() {
      return { ok: false, code: "tool_not_permitted", message: "no prompts here" };
    },
    async close() {},
  };
  return host;
}

const write: Extract<Decision, { type: "allow" }> = {
  type: "allow",
  call_id: "call_w",
  tool: "create_study_event",
  server: "calendar",
  risk: "write_reversible",
  args: { title: "Revise", user_id: "alice", idempotency_key: KEY },
  model_args: { title: "Revise" },
  fingerprint: actionFingerprint("create_study_event", { title: "Revise" }),
};

async function execute(
  tools: ToolHost,
  options: { budget?: number; ledger?: LedgerRow[]; principal?: typeof alice } = {},
) {
  const host = memoryHost({ planner: scriptedPlanner([]), tools, budgets: { tool_calls: options.budget ?? 12 } });
  for (const row of options.ledger ?? []) await host.ledgerStore.begin("t1", row);
  const state = { status: "tool_authorized", decisions: [write], usage: ZERO_USAGE } as unknown as State;
  const update = await makeExecuteNode(host)(state, {
    configurable: { thread_id: "t1", langgraph_auth_user: options.principal ?? alice },
  });
  const result = update.call_results?.[0] as CallResult;
  // The node's update as plain values (no Overwrite wrappers are used by execute).
  const written = { ledger: (update.ledger ?? []) as LedgerRow[], usage: update.usage as UsageUpdate };
  return { update: written, result, durable: await host.ledgerStore.list("t1") };
}

/** The rows as [tool, attempt, status, error_code, reconciles, reconciled_by]. */
function shape(rows: readonly LedgerRow[]) {
  return rows.map((row) => [
    row.tool,
    row.attempt,
    row.status,
    row.error_code,
    row.reconciles ?? null,
    row.reconciled_by ?? null,
  ]);
}

describe("execute reconciles a write whose outcome is unknown", () => {
  it("turns a timed-out write into a success when the status tool says it was applied", async () => {
    const tools = scriptedTools({ create_study_event: [TIMEOUT], get_write_status: [APPLIED] });
    const { update, result, durable } = await execute(tools);
    expect(result).toMatchObject({
      ok: true,
      structured: { reconciled: true, status_tool: "get_write_status", status: { applied: true } },
    });
    const expected = [
      ["create_study_event", 1, "succeeded", null, null, 2],
      ["get_write_status", 2, "succeeded", null, 1, null],
    ];
    expect(shape(update.ledger)).toEqual(expected);
    expect(shape(durable)).toEqual(expected);
    expect(tools.calls.map((call) => call.tool)).toEqual(["create_study_event", "get_write_status"]);
    // Same key, same identity as the write.
    expect(tools.calls[1]?.args).toEqual({ user_id: "alice", idempotency_key: KEY });
    expect(update.usage.tool_calls).toBe(2);
  });

  it("retries once with the same key when the status tool says it was not applied", async () => {
    const tools = scriptedTools({ create_study_event: [GONE, CREATED], get_write_status: [NOT_APPLIED] });
    const { update, result } = await execute(tools);
    expect(result).toMatchObject({ ok: true, structured: { replayed: false } });
    expect(shape(update.ledger)).toEqual([
      ["create_study_event", 1, "failed", "server_unavailable", null, 2],
      ["get_write_status", 2, "succeeded", null, 1, null],
      ["create_study_event", 3, "succeeded", null, null, null],
    ]);
    const sends = tools.calls.filter((call) => call.tool === "create_study_event");
    expect(sends.map((call) => call.args["idempotency_key"])).toEqual([KEY, KEY]);
    expect(update.ledger.filter((row) => row.tool === "create_study_event").map((row) => row.idempotency_key)).toEqual([
      KEY,
      KEY,
    ]);
    expect(update.usage.tool_calls).toBe(3);
  });

  it("sends a write at most twice: a retry that is lost again and not applied ends failed", async () => {
    const tools = scriptedTools({
      create_study_event: [TIMEOUT, TIMEOUT],
      get_write_status: [NOT_APPLIED, NOT_APPLIED],
    });
    const { update, result } = await execute(tools);
    expect(result).toMatchObject({ ok: false, code: "tool_timeout" });
    expect(tools.calls.filter((call) => call.tool === "create_study_event")).toHaveLength(2);
    expect(shape(update.ledger).map((row) => row.slice(0, 3))).toEqual([
      ["create_study_event", 1, "failed"],
      ["get_write_status", 2, "succeeded"],
      ["create_study_event", 3, "failed"],
      ["get_write_status", 4, "succeeded"],
    ]);
  });

  it("leaves the write outcome_unknown, and never resends it, when the status tool cannot be reached", async () => {
    const tools = scriptedTools({ create_study_event: [TIMEOUT], get_write_status: [GONE, GONE] });
    const { update, result } = await execute(tools);
    expect(result).toMatchObject({ ok: false, code: "outcome_unknown" });
    expect(shape(update.ledger)).toEqual([
      ["create_study_event", 1, "outcome_unknown", "tool_timeout", null, null],
      ["get_write_status", 2, "failed", "server_unavailable", 1, null],
      ["get_write_status", 3, "failed", "server_unavailable", 1, null],
    ]);
    expect(tools.calls.filter((call) => call.tool === "create_study_event")).toHaveLength(1);
  });

  it("waits for a crashed server to be reconnected before asking", async () => {
    let polls = 0;
    const tools = scriptedTools(
      { create_study_event: [GONE], get_write_status: [APPLIED] },
      { healthy: () => (polls += 1) > 3 },
    );
    const { result } = await execute(tools);
    expect(result.ok).toBe(true);
    expect(polls).toBeGreaterThan(3);
  });

  it("gives up on a server that stays down for the status tool's timeout, without resending", async () => {
    const tools = scriptedTools({ create_study_event: [GONE] }, { healthy: () => false, statusTimeoutMs: 300 });
    const { update, result } = await execute(tools);
    expect(result).toMatchObject({ ok: false, code: "outcome_unknown" });
    expect(tools.calls.map((call) => call.tool)).toEqual(["create_study_event"]);
    expect(shape(update.ledger)).toEqual([
      ["create_study_event", 1, "outcome_unknown", "server_unavailable", null, null],
    ]);
  });

  it("treats a status answer without a boolean as no answer", async () => {
    const tools = scriptedTools({
      create_study_event: [TIMEOUT],
      get_write_status: [{ ok: true, text: "{}", structured: { applied: "yes" } }],
    });
    const { result } = await execute(tools);
    expect(result).toMatchObject({ ok: false, code: "outcome_unknown" });
    expect(tools.calls.filter((call) => call.tool === "create_study_event")).toHaveLength(1);
  });

  it("does not ask when the tool-call budget is used up, and stays outcome_unknown", async () => {
    const tools = scriptedTools({ create_study_event: [TIMEOUT] });
    const { update, result } = await execute(tools, { budget: 1 });
    expect(result).toMatchObject({ ok: false, code: "outcome_unknown" });
    expect(shape(update.ledger)).toEqual([["create_study_event", 1, "outcome_unknown", "tool_timeout", null, null]]);
    expect(update.usage.tool_calls).toBe(1);
  });

  it("stays outcome_unknown without a status tool in the contract", async () => {
    const tools = scriptedTools({ create_study_event: [TIMEOUT] }, { withoutRule: true });
    const { result } = await execute(tools);
    expect(result).toMatchObject({ ok: false, code: "outcome_unknown" });
    expect(tools.calls.map((call) => call.tool)).toEqual(["create_study_event"]);
  });

  it("keeps a known server error as a plain failure, without asking", async () => {
    const rejected: NormalizedResult = {
      ok: false,
      code: "invalid_arguments",
      message: "idempotency key reused with different arguments",
    };
    const tools = scriptedTools({ create_study_event: [rejected] });
    const { update, result } = await execute(tools);
    expect(result).toMatchObject({ ok: false, code: "invalid_arguments" });
    expect(shape(update.ledger)).toEqual([["create_study_event", 1, "failed", "invalid_arguments", null, null]]);
  });
});

describe("execute after a crash found the write running", () => {
  const running: LedgerRow = {
    call_id: "call_w",
    attempt: 1,
    tool: "create_study_event",
    server: "calendar",
    risk: "write_reversible",
    fingerprint: write.fingerprint,
    idempotency_key: KEY,
    status: "running",
    error_code: null,
    started_at: new Date(Date.now() - 60_000).toISOString(),
    finished_at: null,
    elapsed_ms: null,
  };

  it("asks instead of resending, and records the write succeeded when it was applied", async () => {
    const tools = scriptedTools({ get_write_status: [APPLIED] });
    const { update, result, durable } = await execute(tools, { ledger: [running] });
    expect(result.ok).toBe(true);
    expect(tools.calls.map((call) => call.tool)).toEqual(["get_write_status"]);
    expect(shape(durable)).toEqual([
      ["create_study_event", 1, "succeeded", null, null, 2],
      ["get_write_status", 2, "succeeded", null, 1, null],
    ]);
    expect(shape(update.ledger)).toEqual(shape(durable));
  });

  it("resends once with the same key when it was not applied", async () => {
    const tools = scriptedTools({ get_write_status: [NOT_APPLIED], create_study_event: [CREATED] });
    const { result, durable } = await execute(tools, { ledger: [running] });
    expect(result.ok).toBe(true);
    expect(tools.calls.map((call) => call.tool)).toEqual(["get_write_status", "create_study_event"]);
    expect(tools.calls[1]?.args["idempotency_key"]).toBe(KEY);
    expect(shape(durable).map((row) => row.slice(0, 3))).toEqual([
      ["create_study_event", 1, "failed"],
      ["get_write_status", 2, "succeeded"],
      ["create_study_event", 3, "succeeded"],
    ]);
  });

  it("does not resend a write that was already retried once before the crash", async () => {
    const firstSend: LedgerRow = {
      ...running,
      status: "failed",
      error_code: "tool_timeout",
      finished_at: running.started_at,
      reconciled_by: 2,
    };
    const check: LedgerRow = {
      ...running,
      attempt: 2,
      tool: "get_write_status",
      risk: "read",
      idempotency_key: null,
      status: "succeeded",
      reconciles: 1,
    };
    const retry: LedgerRow = { ...running, attempt: 3 };
    const tools = scriptedTools({ get_write_status: [NOT_APPLIED] });
    const { result } = await execute(tools, { ledger: [firstSend, check, retry] });
    // Known not applied, and not sent a third time.
    expect(result).toMatchObject({ ok: false, code: "tool_failed" });
    expect(tools.calls.map((call) => call.tool)).toEqual(["get_write_status"]);
  });

  it("re-asks when the crash cut off a status check", async () => {
    const unknown: LedgerRow = {
      ...running,
      status: "outcome_unknown",
      error_code: "tool_timeout",
      finished_at: running.started_at,
    };
    const check: LedgerRow = {
      ...running,
      attempt: 2,
      tool: "get_write_status",
      risk: "read",
      idempotency_key: null,
      reconciles: 1,
    };
    const tools = scriptedTools({ get_write_status: [APPLIED] });
    const { durable } = await execute(tools, { ledger: [unknown, check] });
    expect(shape(durable)).toEqual([
      ["create_study_event", 1, "succeeded", null, null, 3],
      ["get_write_status", 2, "abandoned", null, 1, null],
      ["get_write_status", 3, "succeeded", null, 1, null],
    ]);
    expect(tools.calls.map((call) => call.tool)).toEqual(["get_write_status"]);
  });

  it("asks as the write's principal even when a reviewer resumed the run", async () => {
    const tools = scriptedTools({ get_write_status: [APPLIED] });
    await execute(tools, { ledger: [running], principal: rita });
    expect(tools.calls[0]?.args).toEqual({ user_id: "alice", idempotency_key: KEY });
  });
});

describe("reconcile helpers", () => {
  it("knows which failures leave a write's effect unknown", () => {
    expect(
      ["tool_timeout", "server_unavailable", "protocol_error", "outcome_unknown"].every((code) =>
        effectUnknown(code as never),
      ),
    ).toBe(true);
    expect(
      ["invalid_arguments", "transient_error", "access_denied", "tool_failed"].some((code) =>
        effectUnknown(code as never),
      ),
    ).toBe(false);
  });

  it("reads only a strict boolean as the status", () => {
    const rule = { tool: "get_write_status", key_argument: "idempotency_key", applied_field: "applied" };
    expect(readStatus({ applied: true }, rule)).toEqual({ kind: "applied" });
    expect(readStatus({ applied: false }, rule)).toEqual({ kind: "not_applied" });
    for (const value of [{ applied: "true" }, {}, null, [true], "applied"])
      expect(readStatus(value, rule)).toEqual({ kind: "unreadable" });
  });

  it("builds status arguments from the write's identity and key", () => {
    const args = statusArguments({
      rule: { tool: "get_write_status", key_argument: "idempotency_key", applied_field: "applied" },
      key: KEY,
      writeContract: contracts.create_study_event,
      writeArgs: { user_id: "alice", idempotency_key: KEY, title: "x" },
      statusContract: contracts.get_write_status,
      injected: { user_id: "rita" },
    });
    expect(args).toEqual({ user_id: "alice", idempotency_key: KEY });
  });
});

describe("reconcile contracts", () => {
  const base = () => JSON.parse(JSON.stringify(shipped)) as { tools: Record<string, Record<string, unknown>> };
  function refused(patch: (config: ReturnType<typeof base>) => void): string {
    const config = base();
    patch(config);
    try {
      parseConfig(JSON.stringify(config), "test.json");
    } catch (error) {
      expect(isConfigError(error)).toBe(true);
      return (error as Error).message;
    }
    throw new Error("expected the config to be refused");
  }

  it("ships create_study_event reconciled through get_write_status", () => {
    const config = parseConfig(JSON.stringify(shipped));
    expect(config.tools["create_study_event"]?.reconcile).toEqual({
      tool: "get_write_status",
      key_argument: "idempotency_key",
      applied_field: "applied",
    });
  });

  it.each([
    [
      "an unknown status tool",
      (config: ReturnType<typeof base>) =>
        ((config.tools["create_study_event"] as Record<string, unknown>)["reconcile"] = {
          tool: "nope",
          key_argument: "k",
        }),
      "reconcile.tool",
    ],
    [
      "a write as status tool",
      (config: ReturnType<typeof base>) =>
        ((config.tools["create_study_event"] as Record<string, unknown>)["reconcile"] = {
          tool: "create_study_event",
          key_argument: "k",
        }),
      "reconcile.tool",
    ],
    [
      "a status tool on another server",
      (config: ReturnType<typeof base>) =>
        ((config.tools["create_study_event"] as Record<string, unknown>)["reconcile"] = {
          tool: "read_note",
          key_argument: "k",
        }),
      "reconcile.tool",
    ],
    [
      "a rule on a read tool",
      (config: ReturnType<typeof base>) =>
        ((config.tools["list_events"] as Record<string, unknown>)["reconcile"] = {
          tool: "get_write_status",
          key_argument: "k",
        }),
      "list_events.reconcile",
    ],
    [
      "a write without an idempotency key",
      (config: ReturnType<typeof base>) =>
        ((config.tools["create_study_event"] as Record<string, unknown>)["injected"] = {
          user_id: "principal.user_id",
        }),
      "create_study_event.reconcile",
    ],
    [
      "an unknown key",
      (config: ReturnType<typeof base>) =>
        ((config.tools["create_study_event"] as Record<string, unknown>)["reconcile"] = {
          tool: "get_write_status",
          key_argument: "k",
          extra: 1,
        }),
      "reconcile",
    ],
  ])("refuses %s", (_label, patch, where) => {
    expect(refused(patch)).toContain(where);
  });
});

describe("plan stops a run with an unresolved write", () => {
  const proposals = [{ call_id: "call_w", name: "create_study_event", raw_arguments: "{}" }];
  it("names the write when its outcome is unknown", () => {
    const reason = unresolvedWrites({
      proposals,
      call_results: [
        { call_id: "call_w", tool: "create_study_event", ok: false, code: "outcome_unknown", message: "m" },
      ],
    });
    expect(reason?.startsWith("outcome_unknown: create_study_event (call_w)")).toBe(true);
  });

  it("ignores other failures and results of earlier turns", () => {
    expect(
      unresolvedWrites({
        proposals,
        call_results: [
          { call_id: "call_w", tool: "create_study_event", ok: false, code: "tool_timeout", message: "m" },
        ],
      }),
    ).toBeUndefined();
    expect(
      unresolvedWrites({
        proposals,
        call_results: [
          { call_id: "call_old", tool: "create_study_event", ok: false, code: "outcome_unknown", message: "m" },
        ],
      }),
    ).toBeUndefined();
  });
});
