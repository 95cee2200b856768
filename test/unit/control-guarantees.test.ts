/**
 * Three guarantees of the control plane that no other test guarded (issue 12),
 * in memory (memoryHost, MemorySaver, scripted planner):
 *
 *  a. a tool the principal holds the scopes for, but that this step withheld
 *     (stage, unhealthy server, not in the top-k, risk policy), proposed anyway
 *     → tool_not_permitted with the withheld reason, no ledger row, no call;
 *  b. a write's idempotency key is a pure function of the intent (thread,
 *     tool, canonical arguments): the same write authorized again carries the
 *     same key, another thread or other values another key;
 *  c. a write found `running` after a crash whose status tool cannot be
 *     reached (or that has no reconcile contract) ends `outcome_unknown`,
 *     never `abandoned`; a read found running is abandoned and re-run.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import type { Budgets } from "../../src/env.js";
import { buildCatalog, type ListedTool } from "../../src/mcp/catalog.js";
import type { NormalizedResult } from "../../src/mcp/normalize.js";
import type { ToolHost } from "../../src/mcp/tool-host.js";
import { makeAuthorizeNode } from "../../src/nodes/authorize.js";
import { makeExecuteNode } from "../../src/nodes/execute.js";
import { hasScopes, idempotencyKey } from "../../src/policy/authorization.js";
import { ToolContractSchema, type ToolContract } from "../../src/policy/contracts.js";
import type { Decision } from "../../src/policy/decision.js";
import { effectiveTools } from "../../src/policy/effective-tools.js";
import { actionFingerprint } from "../../src/policy/fingerprint.js";
import { ZERO_USAGE } from "../../src/policy/usage.js";
import type { LedgerRow } from "../../src/state/ledger.js";
import { runConfigFor } from "../../src/run-config.js";
import type { CallResult, State } from "../../src/state.js";
import { graphHarness } from "../support/harness.js";
import { memoryHost } from "../support/memory-host.js";
import { calls, proposal, scriptedPlanner, type ScriptStep } from "../support/scripted-planner.js";

const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read", "calendar:read", "calendar:write"],
  grants: { courses: ["cs301"] },
};
const FINAL: ScriptStep = { type: "final", answer: "done", citations: [], abstained: false };
const OK: NormalizedResult = { ok: true, text: '{"ok":true}', structured: { ok: true } };

/** One fake tool: its contract (as in warrant.config.json) and how its server lists it. */
interface FakeTool {
  contract: Record<string, unknown>;
  listed: Omit<ListedTool, "name">;
}

/**
 * A ToolHost like memoryTools(), built from the given tools: health per
 * server, the top-k limit and the results are the test's to choose. Every
 * call is recorded. `unlisted` names contracted tools their server does not list.
 */
function fakeTools(
  definitions: Record<string, FakeTool>,
  options: {
    healthy?: (server: string) => boolean;
    maxTools?: number;
    results?: (tool: string, args: Record<string, unknown>) => NormalizedResult;
    unlisted?: string[];
  } = {},
) {
  const contracts: Record<string, ToolContract> = {};
  const listed: Record<string, ListedTool[]> = {};
  for (const [name, definition] of Object.entries(definitions)) {
    const contract = ToolContractSchema.parse(definition.contract);
    contracts[name] = contract;
    if (options.unlisted?.includes(name)) continue;
    (listed[contract.server] ??= []).push({ name, ...definition.listed });
  }
  const { tools } = buildCatalog(contracts, listed);
  const callLog: { tool: string; args: Record<string, unknown> }[] = [];
  const host: ToolHost & { calls: typeof callLog; contracts: typeof contracts } = {
    calls: callLog,
    contracts,
    maxTools: options.maxTools ?? 8,
    catalog: () => tools,
    isHealthy: options.healthy ?? (() => true),
    isListed: (name) => Object.values(listed).some((entries) => entries.some((entry) => entry.name === name)),
    async call(tool, args) {
      callLog.push({ tool: tool.name, args });
      return (options.results ?? (() => OK))(tool.name, args);
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

const object = (properties: Record<string, unknown>, required: string[] = []) => ({
  inputSchema: { type: "object", properties, required },
});

const READ_NOTE: FakeTool = {
  contract: {
    server: "notes",
    risk: "read",
    scopes: ["notes:read"],
    description: "read a note",
    injected: { user_id: "principal.user_id" },
  },
  listed: object({ user_id: { type: "string" }, note_id: { type: "string" } }, ["note_id"]),
};

/** The real graph on a memory host with these tools; one fresh thread per call unless one is given. */
function harness(
  tools: ToolHost,
  steps: ScriptStep[],
  options: { budgets?: Partial<Budgets>; threadId?: string } = {},
) {
  const planner = scriptedPlanner(steps);
  const host = memoryHost({ planner, tools, ...(options.budgets ? { budgets: options.budgets } : {}) });
  const h = graphHarness(host, { principal: alice, ...(options.threadId ? { threadId: options.threadId } : {}) });
  return {
    ...h,
    planner,
    start: (request: string) => h.start(request),
    approve: () => h.approve(),
    ledgerRows: () => host.ledgerStore.rows.get(h.threadId) ?? [],
  };
}

describe("a. a tool this step withheld, proposed anyway, is tool_not_permitted and never runs", () => {
  /** Proposes `hidden` on the real graph, then finishes; checks the whole outcome. */
  async function proposeHidden(
    tools: ReturnType<typeof fakeTools>,
    hidden: string,
    args: Record<string, unknown>,
    reason: string,
    request = "read my note please",
  ) {
    // The principal could call it: only this step's offer leaves it out.
    expect(hasScopes(alice, tools.contracts[hidden] as ToolContract)).toBe(true);
    const hiddenCall = proposal(hidden, args);
    const h = harness(tools, [calls(hiddenCall), FINAL]);
    await h.start(request);
    h.planner.assertDone();

    // The planner was not shown the tool, and the step recorded why.
    expect(h.planner.inputs[0]?.tools.map((tool) => tool.name)).not.toContain(hidden);
    expect(await h.toolCode(hiddenCall.call_id)).toBe("tool_not_permitted");
    const denied = h.host.auditStore.events.filter((event) => event.kind === "denied");
    expect(denied).toEqual([
      expect.objectContaining({
        subject: hiddenCall.call_id,
        code: "tool_not_permitted",
        tool: hidden,
        node: "authorize",
      }),
    ]);
    expect(denied[0]?.detail.startsWith(`offered (${reason}):`)).toBe(true);

    // Nothing ran and nothing was recorded as an effect.
    expect(tools.calls).toEqual([]);
    expect(h.ledgerRows()).toEqual([]);
    const values = await h.values();
    expect(values.ledger).toEqual([]);
    expect(values.status).toBe("completed");
    return h;
  }

  it("withheld by stage (contract stages: other)", async () => {
    const tools = fakeTools({
      read_note: READ_NOTE,
      archive_note: {
        contract: { server: "notes", risk: "read", scopes: ["notes:read"], stages: ["other"] },
        listed: object({ note_id: { type: "string" } }),
      },
    });
    await proposeHidden(tools, "archive_note", { note_id: "cs301.a" }, "stage");
  });

  it("withheld because its server is unhealthy", async () => {
    const tools = fakeTools(
      {
        read_note: READ_NOTE,
        read_backup: {
          contract: { server: "backup", risk: "read", scopes: ["notes:read"] },
          listed: object({ note_id: { type: "string" } }),
        },
      },
      { healthy: (server) => server !== "backup" },
    );
    await proposeHidden(tools, "read_backup", { note_id: "cs301.a" }, "unhealthy");
  });

  it("withheld because it is not in the top-k for the request", async () => {
    const tools = fakeTools(
      {
        read_note: READ_NOTE,
        list_events: {
          contract: {
            server: "calendar",
            risk: "read",
            scopes: ["calendar:read"],
            description: "list calendar events",
          },
          listed: object({ day: { type: "string" } }),
        },
      },
      { maxTools: 1 },
    );
    const h = await proposeHidden(tools, "list_events", { day: "mon" }, "not_relevant", "read my note please");
    expect(h.planner.inputs[0]?.tools.map((tool) => tool.name)).toEqual(["read_note"]);
  });

  it("withheld by the step's risk policy (effectiveTools with allowedRisks), through authorize and execute", async () => {
    const tools = fakeTools({
      read_note: READ_NOTE,
      create_event: {
        contract: {
          server: "calendar",
          risk: "write_reversible",
          scopes: ["calendar:write"],
          injected: { user_id: "principal.user_id" },
        },
        listed: object({ title: { type: "string" } }),
      },
    });
    const host = memoryHost({ planner: scriptedPlanner([]), tools });
    const offer = effectiveTools({
      tools: tools.catalog(),
      principal: alice,
      stage: "default",
      allowedRisks: ["read"],
      isHealthy: () => true,
      maxTools: 8,
      request: "create an event",
    });
    expect(offer.withheld).toEqual([{ tool: "create_event", reason: "risk" }]);

    const write = proposal("create_event", { title: "study" });
    const config = runConfigFor({ threadId: "risk-thread", principal: alice });
    const state = {
      status: "tool_proposed",
      messages: [],
      proposals: [write],
      tool_offer: { offered: offer.offered.map((tool) => tool.name), withheld: offer.withheld },
      run: {
        run_id: "run-risk",
        request: "create an event",
        started_at: new Date().toISOString(),
        turn: 1,
        owner: "alice",
        principal: alice,
        context: {},
      },
      usage: ZERO_USAGE,
      repeats: null,
      evidence: [],
      ledger: [],
    } as unknown as State;
    const authorized = await makeAuthorizeNode(host)(state, config);
    expect(authorized.decisions).toEqual([
      expect.objectContaining({
        type: "deny",
        call_id: write.call_id,
        code: "tool_not_permitted",
        check: "offered",
        withheld: "risk",
      }),
    ]);

    // The graph routes a step of denials to observe; even handed to execute, a denial runs nothing.
    const executed = await makeExecuteNode(host)(
      { ...state, status: "tool_authorized", decisions: authorized.decisions } as unknown as State,
      config,
    );
    expect(executed.call_results).toEqual([]);
    expect(executed.ledger).toEqual([]);
    expect(tools.calls).toEqual([]);
    expect(await host.ledgerStore.list("risk-thread")).toEqual([]);
  });
});

/** A calendar-like write with a host-made idempotency key; the fake server applies each key once. */
function calendarTools() {
  const events = new Map<string, Record<string, unknown>>();
  const tools = fakeTools(
    {
      create_event: {
        contract: {
          server: "calendar",
          risk: "write_reversible",
          scopes: ["calendar:write"],
          injected: { user_id: "principal.user_id", idempotency_key: "action.idempotency_key" },
        },
        listed: object(
          {
            user_id: { type: "string" },
            idempotency_key: { type: "string" },
            title: { type: "string" },
            day: { type: "string" },
          },
          ["title"],
        ),
      },
    },
    {
      results: (_tool, args) => {
        const key = String(args["idempotency_key"]);
        const replayed = events.has(key);
        if (!replayed) events.set(key, { ...args });
        return { ok: true, text: JSON.stringify({ event_id: key, replayed }), structured: { event_id: key, replayed } };
      },
    },
  );
  return { tools, events };
}

describe("b. a write's idempotency key is a pure function of the intent", () => {
  const args = { title: "study", day: "mon" };

  it("idempotencyKey: same thread, tool and canonical arguments → same key; anything else → another", () => {
    const key = idempotencyKey("t1", "create_event", args);
    expect(key).toMatch(/^wk_[0-9a-f]{40}$/);
    expect(idempotencyKey("t1", "create_event", { day: "mon", title: "study" })).toBe(key);
    expect(idempotencyKey("t1", "create_event", { slot: { b: 1, a: 2 } })).toBe(
      idempotencyKey("t1", "create_event", { slot: { a: 2, b: 1 } }),
    );
    expect(idempotencyKey("t1", "create_event", { ...args, day: "tue" })).not.toBe(key);
    expect(idempotencyKey("t1", "create_event", { title: "study" })).not.toBe(key);
    expect(idempotencyKey("t2", "create_event", args)).not.toBe(key);
    expect(idempotencyKey("t1", "create_study_event", args)).not.toBe(key);
    // The separator keeps thread and tool apart.
    expect(idempotencyKey("t1c", "reate_event", args)).not.toBe(key);
  });

  it("the same write proposed again in a later turn and approved twice carries the same key; the calendar holds one event", async () => {
    const { tools, events } = calendarTools();
    const first = proposal("create_event", args);
    // The model repeats the intent with its keys in another order.
    const second = proposal("create_event", '{"day":"mon","title":"study"}');
    const h = harness(tools, [calls(first), calls(second), FINAL], { budgets: { max_repeats: 2 } });
    await h.start("plan a study session");
    await h.approve();
    await h.approve();
    h.planner.assertDone();

    const expected = idempotencyKey(h.threadId, "create_event", args);
    const rows = h.ledgerRows();
    expect(rows.map((row) => [row.call_id, row.status, row.idempotency_key])).toEqual([
      [first.call_id, "succeeded", expected],
      [second.call_id, "succeeded", expected],
    ]);
    expect(tools.calls.map((call) => call.args["idempotency_key"])).toEqual([expected, expected]);
    expect(tools.calls.map((call) => call.args)).toEqual([
      { ...args, user_id: "alice", idempotency_key: expected },
      { ...args, user_id: "alice", idempotency_key: expected },
    ]);
    expect(events.size).toBe(1);
    expect((await h.values()).status).toBe("completed");

    // Another thread, the same write: another key, so another event.
    const other = proposal("create_event", args);
    const h2 = harness(tools, [calls(other), FINAL]);
    await h2.start("plan a study session");
    await h2.approve();
    const otherKey = h2.ledgerRows()[0]?.idempotency_key;
    expect(otherKey).toBe(idempotencyKey(h2.threadId, "create_event", args));
    expect(otherKey).not.toBe(expected);
    expect(tools.calls.at(-1)?.args["idempotency_key"]).toBe(otherKey);
    expect(events.size).toBe(2);
  });

  it("authorize re-run on the same state (a crash before its checkpoint) decides the same args and key", async () => {
    const { tools } = calendarTools();
    const write = proposal("create_event", args);
    const h = harness(tools, [calls(write), FINAL]);
    await h.start("plan a study session");

    // The checkpoint authorize starts from: what a restart after a crash would run it on again.
    let before: State | undefined;
    for await (const snapshot of h.graph.getStateHistory(h.config)) {
      if (snapshot.next.includes("authorize")) before = snapshot.values as State;
    }
    if (!before) throw new Error("no checkpoint before authorize");
    const authorize = makeAuthorizeNode(h.host);
    const once = await authorize(before, h.config);
    const again = await authorize(before, h.config);
    const recorded = (await h.values()).decisions;

    const key = idempotencyKey(h.threadId, "create_event", args);
    const shape = (decisions: readonly Decision[] | undefined) =>
      (decisions ?? []).map((decision) =>
        decision.type === "deny"
          ? decision
          : { type: decision.type, call_id: decision.call_id, args: decision.args, fingerprint: decision.fingerprint },
      );
    const expected = [
      {
        type: "review",
        call_id: write.call_id,
        args: { ...args, user_id: "alice", idempotency_key: key },
        fingerprint: actionFingerprint("create_event", args),
      },
    ];
    expect(shape(once.decisions)).toEqual(expected);
    expect(shape(again.decisions)).toEqual(expected);
    expect(shape(recorded)).toEqual(expected);

    // And approving the run's own decision sends that same key.
    await h.approve();
    expect(tools.calls.map((call) => call.args["idempotency_key"])).toEqual([key]);
  });
});

describe("c. a write found running after a crash is outcome_unknown, never abandoned", () => {
  const KEY = "wk_feedfacefeedfacefeedfacefeedfacefeedface";
  const TITLE = { title: "Revise" };
  const writeTools = (options: Parameters<typeof fakeTools>[1] & { withoutRule?: boolean } = {}) =>
    fakeTools(
      {
        create_event: {
          contract: {
            server: "calendar",
            risk: "write_reversible",
            scopes: ["calendar:write"],
            injected: { user_id: "principal.user_id", idempotency_key: "action.idempotency_key" },
            ...(options.withoutRule
              ? {}
              : { reconcile: { tool: "get_write_status", key_argument: "idempotency_key" } }),
          },
          listed: object({ user_id: {}, idempotency_key: {}, title: {} }),
        },
        get_write_status: {
          contract: {
            server: "calendar",
            risk: "read",
            scopes: ["calendar:read"],
            max_attempts: 2,
            timeout_ms: 200,
            injected: { user_id: "principal.user_id" },
          },
          listed: object({ user_id: {}, idempotency_key: {} }),
        },
        read_note: READ_NOTE,
      },
      options,
    );

  const write: Extract<Decision, { type: "allow" }> = {
    type: "allow",
    call_id: "call_w",
    tool: "create_event",
    server: "calendar",
    risk: "write_reversible",
    args: { ...TITLE, user_id: "alice", idempotency_key: KEY },
    model_args: TITLE,
    fingerprint: actionFingerprint("create_event", TITLE),
  };
  const read: Extract<Decision, { type: "allow" }> = {
    type: "allow",
    call_id: "call_r",
    tool: "read_note",
    server: "notes",
    risk: "read",
    args: { note_id: "cs301.a", user_id: "alice" },
    model_args: { note_id: "cs301.a" },
    fingerprint: actionFingerprint("read_note", { note_id: "cs301.a" }),
  };
  const runningRow = (action: typeof write): LedgerRow => ({
    call_id: action.call_id,
    attempt: 1,
    tool: action.tool,
    server: action.server,
    risk: action.risk,
    fingerprint: action.fingerprint,
    idempotency_key: action.risk === "read" ? null : KEY,
    status: "running",
    error_code: null,
    started_at: new Date(Date.now() - 60_000).toISOString(),
    finished_at: null,
    elapsed_ms: null,
    run_id: "run-crashed",
    owner: "alice",
  });

  /** The execute node, resumed after a crash: the ledger holds the call's `running` row. */
  async function executeAfterCrash(tools: ToolHost, action: typeof write) {
    const host = memoryHost({ planner: scriptedPlanner([]), tools });
    await host.ledgerStore.begin("t-crash", runningRow(action));
    const state = {
      status: "tool_authorized",
      decisions: [action],
      usage: ZERO_USAGE,
      run: {
        run_id: "run-crashed",
        request: "r",
        started_at: new Date().toISOString(),
        turn: 1,
        owner: "alice",
        principal: alice,
        context: {},
      },
    } as unknown as State;
    const update = await makeExecuteNode(host)(state, runConfigFor({ threadId: "t-crash", principal: alice }));
    return {
      result: update.call_results?.[0] as CallResult,
      durable: await host.ledgerStore.list("t-crash"),
      written: (update.ledger ?? []) as LedgerRow[],
    };
  }

  const shape = (rows: readonly LedgerRow[]) =>
    rows.map((row) => [row.tool, row.attempt, row.status, row.error_code, row.reconciles ?? null]);

  it("status tool's server down: outcome_unknown, not resent", async () => {
    const tools = writeTools({ healthy: (server) => server !== "calendar" });
    const { result, durable, written } = await executeAfterCrash(tools, write);
    expect(result).toMatchObject({ ok: false, code: "outcome_unknown" });
    expect(shape(durable)).toEqual([["create_event", 1, "outcome_unknown", "outcome_unknown", null]]);
    expect(shape(written)).toEqual(shape(durable));
    expect(tools.calls).toEqual([]);
  });

  it("status tool answering server_unavailable: outcome_unknown after its attempts, not resent", async () => {
    const tools = writeTools({
      results: (tool) =>
        tool === "get_write_status" ? { ok: false, code: "server_unavailable", message: "gone" } : OK,
    });
    const { result, durable } = await executeAfterCrash(tools, write);
    expect(result).toMatchObject({ ok: false, code: "outcome_unknown" });
    expect(shape(durable)).toEqual([
      ["create_event", 1, "outcome_unknown", "outcome_unknown", null],
      ["get_write_status", 2, "failed", "server_unavailable", 1],
      ["get_write_status", 3, "failed", "server_unavailable", 1],
    ]);
    expect(tools.calls.map((call) => call.tool)).toEqual(["get_write_status", "get_write_status"]);
  });

  it("status tool no longer listed by its server: outcome_unknown, nothing called", async () => {
    const tools = writeTools({ unlisted: ["get_write_status"] });
    const { result, durable } = await executeAfterCrash(tools, write);
    expect(result).toMatchObject({ ok: false, code: "outcome_unknown" });
    expect(shape(durable)).toEqual([["create_event", 1, "outcome_unknown", "outcome_unknown", null]]);
    expect(tools.calls).toEqual([]);
  });

  it("no reconcile contract: outcome_unknown, nothing called", async () => {
    const tools = writeTools({ withoutRule: true });
    const { result, durable } = await executeAfterCrash(tools, write);
    expect(result).toMatchObject({ ok: false, code: "outcome_unknown" });
    expect(shape(durable)).toEqual([["create_event", 1, "outcome_unknown", "outcome_unknown", null]]);
    expect(tools.calls).toEqual([]);
  });

  it("the contrast: a read found running is abandoned and run again", async () => {
    const tools = writeTools();
    const { result, durable } = await executeAfterCrash(tools, read);
    expect(result).toMatchObject({ ok: true });
    expect(shape(durable)).toEqual([
      ["read_note", 1, "abandoned", null, null],
      ["read_note", 2, "succeeded", null, null],
    ]);
    expect(tools.calls).toEqual([{ tool: "read_note", args: read.args }]);
  });
});
