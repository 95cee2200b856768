/**
 * The policy pipeline (src/policy/decide.ts), check by check and in order:
 * offered → arguments → run_bound → authorized → budget → repeat → review.
 * Each named check is run on its own (pass and refuse), then through
 * decideOne/decideAll to pin which check answers when several would refuse.
 * Pure: no host, no graph.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { buildCatalog, type ListedTool } from "../../src/mcp/catalog.js";
import type { CatalogTool, Proposal } from "../../src/policy/contracts.js";
import { mayDecide, REVIEWER_SCOPE } from "../../src/policy/approval.js";
import { ACCESS_DENIED_MESSAGE, idempotencyKey } from "../../src/policy/authorization.js";
import { ReviewPolicySchema, type ReviewPolicy } from "../../src/policy/config.js";
import { ToolContractSchema, type ToolContract } from "../../src/policy/contracts.js";
import { CHECKS, decideAll, decideOne, reviewRuleFor } from "../../src/policy/decide.js";
import {
  argumentsValid,
  authorized,
  budget,
  offered,
  repeat,
  runBound,
  type Counters,
  type DecideContext,
} from "../../src/policy/checks.js";
import { CHECK_NAMES, type Decision, type Denial } from "../../src/policy/decision.js";
import { actionFingerprint } from "../../src/policy/fingerprint.js";
import { sanitizeProposals } from "../../src/planners/sanitize.js";

const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read", "calendar:write", "cases:write"],
  grants: { courses: ["cs301"] },
};
const NOW = Date.parse("2026-03-02T10:00:00.000Z");
const THREAD = "thread-decide";
const TTL_MS = 90_000;

const contracts: Record<string, ToolContract> = {
  read_note: ToolContractSchema.parse({
    server: "notes",
    risk: "read",
    scopes: ["notes:read"],
    injected: { user_id: "principal.user_id" },
    resource: { argument: "note_id", pattern: "^([a-z0-9]+)\\.", principal_field: "courses" },
    max_string_chars: 40,
  }),
  create_event: ToolContractSchema.parse({
    server: "calendar",
    risk: "write_reversible",
    scopes: ["calendar:write"],
    injected: { user_id: "principal.user_id", idempotency_key: "action.idempotency_key" },
    approval_ttl_ms: TTL_MS,
  }),
  delete_event: ToolContractSchema.parse({
    server: "calendar",
    risk: "write_irreversible",
    scopes: ["calendar:write"],
    injected: { user_id: "principal.user_id" },
  }),
  update_case: ToolContractSchema.parse({
    server: "cases",
    risk: "read",
    scopes: ["cases:write"],
    run_bound: { case_id: { from_request: "C-\\d{3,}" } },
  }),
  // Contracted and within alice's scopes, but this step withholds it (stage).
  archive_note: ToolContractSchema.parse({ server: "notes", risk: "read", scopes: ["notes:read"], stages: ["other"] }),
};

const listed: Record<string, ListedTool[]> = {
  notes: [
    {
      name: "read_note",
      inputSchema: {
        type: "object",
        properties: { user_id: { type: "string" }, note_id: { type: "string", maxLength: 100 } },
        required: ["user_id", "note_id"],
      },
    },
    {
      name: "archive_note",
      inputSchema: { type: "object", properties: { note_id: { type: "string" } }, required: ["note_id"] },
    },
    // Listed by the server but without a contract: hidden, never offered.
    { name: "drop_notes", inputSchema: { type: "object", properties: {} } },
  ],
  calendar: [
    {
      name: "create_event",
      inputSchema: {
        type: "object",
        properties: {
          user_id: { type: "string" },
          idempotency_key: { type: "string" },
          title: { type: "string" },
          day: { type: "string" },
        },
        required: ["title"],
      },
    },
    {
      name: "delete_event",
      inputSchema: {
        type: "object",
        properties: { user_id: { type: "string" }, event_id: { type: "string" } },
        required: ["event_id"],
      },
    },
  ],
  cases: [
    {
      name: "update_case",
      inputSchema: {
        type: "object",
        properties: { case_id: { type: "string" }, note: { type: "string" } },
        required: ["note"],
      },
    },
  ],
};

const { tools: catalogTools, missing } = buildCatalog(contracts, listed);
const listedNames = new Set(Object.values(listed).flatMap((entries) => entries.map((entry) => entry.name)));

function tool(name: string): CatalogTool {
  const found = catalogTools.find((entry) => entry.name === name);
  if (!found) throw new Error(`${name} not in the catalog`);
  return found;
}

/** The step's context: everything offered but archive_note (withheld: stage). */
function context(overrides: Partial<DecideContext> = {}): DecideContext {
  return {
    offer: {
      offered: ["read_note", "create_event", "delete_event", "update_case"],
      withheld: [{ tool: "archive_note", reason: "stage" }],
    },
    catalog: {
      find: (name) => catalogTools.find((entry) => entry.name === name),
      isListed: (name) => listedNames.has(name),
    },
    owner: alice,
    threadId: THREAD,
    runBound: { case_id: "C-100" },
    reviewPolicy: ReviewPolicySchema.parse(undefined),
    maxRepeats: 2,
    now: NOW,
    ...overrides,
  };
}

const fresh = (overrides: Partial<Counters> = {}): Counters => ({ budgetLeft: 10, repeats: {}, ...overrides });

let ids = 0;
function propose(name: string, args: Record<string, unknown> | string): Proposal {
  ids += 1;
  return { call_id: `call_${ids}`, name, raw_arguments: typeof args === "string" ? args : JSON.stringify(args) };
}

function denial(decision: Decision): Denial {
  if (decision.type !== "deny") throw new Error(`expected a denial, got ${decision.type}`);
  return decision;
}

/** code, check and withheld of a decision that must be a denial. */
function refusal(decision: Decision) {
  const denied = denial(decision);
  return { code: denied.code, check: denied.check, withheld: denied.withheld };
}

const decide = (proposal: Proposal, overrides: Partial<DecideContext> = {}, counters: Counters = fresh()) =>
  decideOne(proposal, context(overrides), counters).decision;

describe("the pipeline's shape", () => {
  it("runs the named checks in the documented order, each named as in CHECK_NAMES", () => {
    expect(CHECKS.map((check) => check.name)).toEqual([
      "offered",
      "arguments",
      "run_bound",
      "authorized",
      "budget",
      "repeat",
    ]);
    expect(CHECK_NAMES.slice(0, 7)).toEqual([
      "offered",
      "arguments",
      "run_bound",
      "authorized",
      "budget",
      "repeat",
      "review",
    ]);
    expect(missing).toEqual([]);
  });
});

describe("check: offered", () => {
  it("passes a tool of the effective set and attaches its catalog entry", () => {
    const result = offered.run({ proposal: propose("read_note", {}) }, context(), fresh());
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.candidate.tool).toBe(tool("read_note"));
  });

  it("refuses a name no server lists and no contract names with unknown_tool", () => {
    const result = offered.run({ proposal: propose("delete_everything", {}) }, context(), fresh());
    expect(result).toMatchObject({ ok: false, denial: { code: "unknown_tool" } });
    expect(refusal(decide(propose("delete_everything", {})))).toEqual({
      code: "unknown_tool",
      check: "offered",
      withheld: undefined,
    });
  });

  it("refuses a withheld tool with tool_not_permitted and the reason it was withheld", () => {
    const result = offered.run({ proposal: propose("archive_note", { note_id: "cs301.a" }) }, context(), fresh());
    expect(result).toMatchObject({ ok: false, denial: { code: "tool_not_permitted", withheld: "stage" } });
    expect(refusal(decide(propose("archive_note", { note_id: "cs301.a" })))).toEqual({
      code: "tool_not_permitted",
      check: "offered",
      withheld: "stage",
    });
  });

  it.each(["unhealthy", "scope", "risk", "not_relevant"])(
    "carries the offer's reason %s through to the denial",
    (reason) => {
      const offer = { offered: ["create_event"], withheld: [{ tool: "read_note", reason }] };
      expect(refusal(decide(propose("read_note", { note_id: "cs301.a" }), { offer }))).toEqual({
        code: "tool_not_permitted",
        check: "offered",
        withheld: reason,
      });
    },
  );

  it("refuses a listed tool without a contract, and a contracted tool the offer does not mention, as not_offered", () => {
    expect(refusal(decide(propose("drop_notes", {})))).toEqual({
      code: "tool_not_permitted",
      check: "offered",
      withheld: "not_offered",
    });
    const offer = { offered: ["create_event"], withheld: [] };
    expect(refusal(decide(propose("read_note", { note_id: "cs301.a" }), { offer }))).toEqual({
      code: "tool_not_permitted",
      check: "offered",
      withheld: "not_offered",
    });
  });

  it("does not offer a name the offer lists but the catalog no longer has", () => {
    const offer = { offered: ["ghost_tool"], withheld: [] };
    expect(refusal(decide(propose("ghost_tool", {}), { offer }))).toMatchObject({
      code: "unknown_tool",
      check: "offered",
    });
  });
});

describe("check: arguments", () => {
  const candidate = (raw: string) => ({ proposal: propose("read_note", raw), tool: tool("read_note") });

  it("passes strictly valid arguments and attaches the parsed values", () => {
    const result = argumentsValid.run(candidate('{"note_id":"cs301.a"}'), context(), fresh());
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.candidate.modelArgs).toEqual({ note_id: "cs301.a" });
  });

  it.each([
    ["text that is not JSON", "{note_id:"],
    ["an array", '["cs301.a"]'],
    ["an unknown key", '{"note_id":"cs301.a","extra":1}'],
    ["the host-injected user_id", '{"note_id":"cs301.a","user_id":"bob"}'],
    ["a missing required argument", "{}"],
    ["a value of the wrong type", '{"note_id":301}'],
    ["a string over the contract's bound", JSON.stringify({ note_id: `cs301.${"x".repeat(60)}` })],
  ])("refuses %s with invalid_arguments", (_label, raw) => {
    expect(argumentsValid.run(candidate(raw), context(), fresh())).toMatchObject({
      ok: false,
      denial: { code: "invalid_arguments" },
    });
    expect(refusal(decide(propose("read_note", raw)))).toEqual({
      code: "invalid_arguments",
      check: "arguments",
      withheld: undefined,
    });
  });
});

describe("check: run_bound", () => {
  const candidate = (args: Record<string, unknown>) => ({
    proposal: propose("update_case", args),
    tool: tool("update_case"),
    modelArgs: args,
  });

  it("passes the value the host fixed for the run", () => {
    expect(runBound.run(candidate({ case_id: "C-100", note: "x" }), context(), fresh()).ok).toBe(true);
  });

  // update_case's server schema makes case_id optional (required: ["note"]), so the
  // arguments check lets the model leave it out; the run-bound check must not.
  it("refuses a call that omits the bound argument its schema makes optional, with access_denied", () => {
    expect(runBound.run(candidate({ note: "x" }), context(), fresh())).toMatchObject({
      ok: false,
      denial: { code: "access_denied", message: ACCESS_DENIED_MESSAGE },
    });
    expect(refusal(decide(propose("update_case", { note: "x" })))).toEqual({
      code: "access_denied",
      check: "run_bound",
      withheld: undefined,
    });
  });

  it("refuses another value, or a run with no value fixed, with access_denied", () => {
    expect(runBound.run(candidate({ case_id: "C-200", note: "x" }), context(), fresh())).toMatchObject({
      ok: false,
      denial: { code: "access_denied", message: ACCESS_DENIED_MESSAGE },
    });
    expect(runBound.run(candidate({ case_id: "C-100", note: "x" }), context({ runBound: {} }), fresh()).ok).toBe(false);
    expect(refusal(decide(propose("update_case", { case_id: "C-200", note: "x" })))).toEqual({
      code: "access_denied",
      check: "run_bound",
      withheld: undefined,
    });
    expect(refusal(decide(propose("update_case", { case_id: "C-100", note: "x" }), { runBound: {} }))).toEqual({
      code: "access_denied",
      check: "run_bound",
      withheld: undefined,
    });
  });
});

describe("check: authorized", () => {
  const candidate = (args: Record<string, unknown>) => ({
    proposal: propose("read_note", args),
    tool: tool("read_note"),
    modelArgs: args,
  });

  it("passes an owner with the scopes and the resource's grant", () => {
    expect(authorized.run(candidate({ note_id: "cs301.a" }), context(), fresh()).ok).toBe(true);
  });

  it("refuses an owner without the contract's scopes with tool_not_permitted, withheld scope", () => {
    const owner = { ...alice, scopes: ["calendar:write"] };
    expect(authorized.run(candidate({ note_id: "cs301.a" }), context({ owner }), fresh())).toMatchObject({
      ok: false,
      denial: { code: "tool_not_permitted", withheld: "scope" },
    });
    expect(refusal(decide(propose("read_note", { note_id: "cs301.a" }), { owner }))).toEqual({
      code: "tool_not_permitted",
      check: "authorized",
      withheld: "scope",
    });
  });

  it("refuses a resource outside the owner's grants with access_denied and the uniform message", () => {
    expect(authorized.run(candidate({ note_id: "db201.a" }), context(), fresh())).toMatchObject({
      ok: false,
      denial: { code: "access_denied", message: ACCESS_DENIED_MESSAGE },
    });
    expect(refusal(decide(propose("read_note", { note_id: "db201.a" })))).toEqual({
      code: "access_denied",
      check: "authorized",
      withheld: undefined,
    });
  });

  it("checks scopes before the resource", () => {
    const owner = { ...alice, scopes: [] };
    expect(refusal(decide(propose("read_note", { note_id: "db201.a" }), { owner }))).toMatchObject({
      code: "tool_not_permitted",
      check: "authorized",
    });
  });
});

describe("check: budget", () => {
  const candidate = () => ({
    proposal: propose("read_note", {}),
    tool: tool("read_note"),
    modelArgs: { note_id: "cs301.a" },
  });

  it("passes while a tool execution is left", () => {
    expect(budget.run(candidate(), context(), fresh({ budgetLeft: 1 })).ok).toBe(true);
  });

  it("refuses at zero with budget_exhausted naming the tool_calls budget", () => {
    expect(budget.run(candidate(), context(), fresh({ budgetLeft: 0 }))).toMatchObject({
      ok: false,
      denial: { code: "budget_exhausted", budget: "tool_calls" },
    });
    const decision = denial(decide(propose("read_note", { note_id: "cs301.a" }), {}, fresh({ budgetLeft: 0 })));
    expect(decision).toMatchObject({ code: "budget_exhausted", check: "budget", budget: "tool_calls" });
  });
});

describe("check: repeat", () => {
  const args = { note_id: "cs301.a" };
  const fingerprint = actionFingerprint("read_note", args);
  const candidate = () => ({ proposal: propose("read_note", args), tool: tool("read_note"), modelArgs: args });

  it("passes under the limit and attaches the action's fingerprint", () => {
    const result = repeat.run(candidate(), context({ maxRepeats: 2 }), fresh({ repeats: { [fingerprint]: 1 } }));
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.candidate.fingerprint).toBe(fingerprint);
  });

  it("refuses at the limit with repeated_action, whatever the key order of the arguments", () => {
    expect(repeat.run(candidate(), context({ maxRepeats: 2 }), fresh({ repeats: { [fingerprint]: 2 } }))).toMatchObject(
      { ok: false, denial: { code: "repeated_action" } },
    );
    const twoKeys = { title: "study", day: "mon" };
    const counters = fresh({ repeats: { [actionFingerprint("create_event", twoKeys)]: 1 } });
    expect(
      refusal(decide(propose("create_event", '{"day":"mon","title":"study"}'), { maxRepeats: 1 }, counters)),
    ).toEqual({ code: "repeated_action", check: "repeat", withheld: undefined });
  });

  it("does not count another action, nor read an inherited name as a count", () => {
    const counters = fresh({ repeats: { [actionFingerprint("read_note", { note_id: "cs301.b" })]: 5 } });
    expect(decide(propose("read_note", args), { maxRepeats: 1 }, counters).type).toBe("allow");
    const inherited = fresh({ repeats: Object.create({ [fingerprint]: 9 }) as Record<string, number> });
    expect(decide(propose("read_note", args), { maxRepeats: 1 }, inherited).type).toBe("allow");
  });
});

describe("review: reviewRuleFor and the final outcome", () => {
  const defaults = ReviewPolicySchema.parse(undefined);
  const strict: ReviewPolicy = ReviewPolicySchema.parse({
    read: "owner_or_reviewer",
    write_reversible: "reviewer_not_owner",
  });

  it("maps each risk to the deployment's rule, none meaning no review", () => {
    expect(reviewRuleFor(tool("read_note"), defaults)).toBeNull();
    expect(reviewRuleFor(tool("create_event"), defaults)).toBe("owner_or_reviewer");
    expect(reviewRuleFor(tool("delete_event"), defaults)).toBe("reviewer_not_owner");
    expect(reviewRuleFor(tool("read_note"), strict)).toBe("owner_or_reviewer");
    expect(reviewRuleFor(tool("create_event"), strict)).toBe("reviewer_not_owner");
    expect(reviewRuleFor(tool("delete_event"), strict)).toBe("reviewer_not_owner");
  });

  it("allows a read without review, with the owner's injected arguments and a reservation", () => {
    const { decision, counters } = decideOne(
      propose("read_note", { note_id: "cs301.a" }),
      context(),
      fresh({ budgetLeft: 3 }),
    );
    const fingerprint = actionFingerprint("read_note", { note_id: "cs301.a" });
    expect(decision).toMatchObject({
      type: "allow",
      tool: "read_note",
      server: "notes",
      risk: "read",
      fingerprint,
      model_args: { note_id: "cs301.a" },
    });
    if (decision.type !== "allow") throw new Error("expected allow");
    expect(decision.args).toEqual({ note_id: "cs301.a", user_id: "alice" });
    expect(counters).toEqual({ budgetLeft: 2, repeats: { [fingerprint]: 1 } });
  });

  it("asks for review of a reversible write under owner_or_reviewer, expiring after the contract's approval_ttl_ms", () => {
    const modelArgs = { title: "study", day: "mon" };
    const { decision, counters } = decideOne(propose("create_event", modelArgs), context(), fresh());
    const fingerprint = actionFingerprint("create_event", modelArgs);
    if (decision.type !== "review") throw new Error(`expected review, got ${decision.type}`);
    expect(decision.rule).toBe("owner_or_reviewer");
    expect(decision.model_args).toEqual(modelArgs);
    expect(decision.args).toEqual({
      ...modelArgs,
      user_id: "alice",
      idempotency_key: idempotencyKey(THREAD, "create_event", modelArgs),
    });
    expect(decision.approval).toEqual({
      action_id: expect.any(String),
      fingerprint,
      version: 1,
      requested_at: new Date(NOW).toISOString(),
      expires_at: new Date(NOW + TTL_MS).toISOString(),
    });
    expect(counters).toEqual({ budgetLeft: 9, repeats: { [fingerprint]: 1 } });
  });

  it("asks four eyes for an irreversible write, with the default 15-minute TTL", () => {
    const decision = decide(propose("delete_event", { event_id: "e1" }));
    if (decision.type !== "review") throw new Error(`expected review, got ${decision.type}`);
    expect(decision.rule).toBe("reviewer_not_owner");
    expect(decision.approval.expires_at).toBe(new Date(NOW + 15 * 60_000).toISOString());
  });

  it("asks for review of a read when the policy says so, and under the policy's rule for writes", () => {
    const read = decide(propose("read_note", { note_id: "cs301.a" }), { reviewPolicy: strict });
    expect(read).toMatchObject({ type: "review", rule: "owner_or_reviewer" });
    expect(decide(propose("create_event", { title: "x" }), { reviewPolicy: strict })).toMatchObject({
      type: "review",
      rule: "reviewer_not_owner",
    });
  });

  it("gives each review its own action id", () => {
    const first = decide(propose("create_event", { title: "x" }));
    const second = decide(propose("create_event", { title: "x" }));
    if (first.type !== "review" || second.type !== "review") throw new Error("expected reviews");
    expect(first.approval.action_id).not.toBe(second.approval.action_id);
  });

  it("allows a reviewed edit without asking again, still reserving budget and repeats", () => {
    const modelArgs = { title: "revised" };
    const { decision, counters } = decideOne(propose("create_event", modelArgs), context(), fresh({ budgetLeft: 2 }), {
      reviewed: { version: 2 },
    });
    expect(decision).toMatchObject({ type: "allow", tool: "create_event", model_args: modelArgs });
    expect(decision).not.toHaveProperty("approval");
    expect(counters).toEqual({ budgetLeft: 1, repeats: { [actionFingerprint("create_event", modelArgs)]: 1 } });
  });

  it("runs every check before review on a reviewed edit", () => {
    const reviewed = { reviewed: { version: 2 } };
    expect(
      refusal(
        decideOne(propose("create_event", { title: "x", user_id: "bob" }), context(), fresh(), reviewed).decision,
      ),
    ).toMatchObject({ code: "invalid_arguments", check: "arguments" });
    expect(
      refusal(
        decideOne(propose("create_event", { title: "x" }), context(), fresh({ budgetLeft: 0 }), reviewed).decision,
      ),
    ).toMatchObject({ code: "budget_exhausted", check: "budget" });
    const seen = fresh({ repeats: { [actionFingerprint("create_event", { title: "x" })]: 2 } });
    expect(
      refusal(decideOne(propose("create_event", { title: "x" }), context(), seen, reviewed).decision),
    ).toMatchObject({ code: "repeated_action", check: "repeat" });
    const owner = { ...alice, scopes: ["notes:read"] };
    expect(
      refusal(decideOne(propose("create_event", { title: "x" }), context({ owner }), fresh(), reviewed).decision),
    ).toMatchObject({ code: "tool_not_permitted", check: "authorized" });
  });
});

describe("the pipeline's order", () => {
  it("reports invalid_arguments for an unauthorized call with invalid arguments", () => {
    // Another course's note and an unknown key: arguments come first.
    expect(refusal(decide(propose("read_note", { note_id: "db201.a", extra: true })))).toEqual({
      code: "invalid_arguments",
      check: "arguments",
      withheld: undefined,
    });
    // An owner without the scope and a missing required argument.
    expect(refusal(decide(propose("read_note", {}), { owner: { ...alice, scopes: [] } }))).toMatchObject({
      code: "invalid_arguments",
      check: "arguments",
    });
  });

  it(
    "decides a resource by the grant alone, never by whether it exists " +
      "(an enrolled course's unknown note is the server's to refuse)",
    () => {
      // The control plane cannot see which notes exist: an unknown note of an
      // enrolled course passes exactly as a real one, and the notes server then
      // answers it with its uniform access_denied (tools/notes/corpus.ts).
      const real = decide(propose("read_note", { note_id: "cs301.lecture-01" }));
      const unknown = decide(propose("read_note", { note_id: "cs301.no-such-note" }));
      expect(real.type).toBe("allow");
      expect(unknown.type).toBe("allow");
      // Another course: access_denied whether the note exists or not, with the same message.
      const other = denial(decide(propose("read_note", { note_id: "db201.lecture-01" })));
      const otherUnknown = denial(decide(propose("read_note", { note_id: "db201.no-such-note" })));
      expect(refusal(other)).toEqual({ code: "access_denied", check: "authorized", withheld: undefined });
      expect({ ...otherUnknown, call_id: other.call_id }).toEqual(other);
    },
  );

  it("reports tool_not_permitted for a hidden tool with bad arguments", () => {
    expect(refusal(decide(propose("archive_note", "{not json")))).toEqual({
      code: "tool_not_permitted",
      check: "offered",
      withheld: "stage",
    });
    expect(refusal(decide(propose("archive_note", { wrong: 1 })))).toEqual({
      code: "tool_not_permitted",
      check: "offered",
      withheld: "stage",
    });
  });

  it("checks run-bound values after the arguments and before the owner's scopes", () => {
    expect(refusal(decide(propose("update_case", { case_id: "C-200" })))).toMatchObject({
      code: "invalid_arguments",
      check: "arguments",
    });
    const owner = { ...alice, scopes: [] };
    expect(refusal(decide(propose("update_case", { case_id: "C-200", note: "x" }), { owner }))).toMatchObject({
      code: "access_denied",
      check: "run_bound",
    });
  });

  it("reports budget_exhausted before repeated_action when both apply", () => {
    const args = { note_id: "cs301.a" };
    const counters = fresh({ budgetLeft: 0, repeats: { [actionFingerprint("read_note", args)]: 5 } });
    expect(refusal(decide(propose("read_note", args), { maxRepeats: 1 }, counters))).toEqual({
      code: "budget_exhausted",
      check: "budget",
      withheld: undefined,
    });
  });
});

describe("decideAll: reservations", () => {
  it("never reserves budget or repeats for a denial: a denied proposal followed by an allowed one", () => {
    const args = { note_id: "cs301.a" };
    const fingerprint = actionFingerprint("read_note", args);
    const proposals = [
      propose("read_note", { note_id: "db201.a" }), // authorized: access_denied
      propose("archive_note", args), // offered: stage
      propose("read_note", '{"note_id":1}'), // arguments
      propose("read_note", args),
    ];
    const { decisions, counters } = decideAll(proposals, context({ maxRepeats: 1 }), fresh({ budgetLeft: 1 }));
    expect(decisions.map((decision) => decision.type)).toEqual(["deny", "deny", "deny", "allow"]);
    expect(counters).toEqual({ budgetLeft: 0, repeats: { [fingerprint]: 1 } });
  });

  it("does not count a proposal refused at the budget or the repeat check", () => {
    const args = { note_id: "cs301.a" };
    const fingerprint = actionFingerprint("read_note", args);
    const start = fresh({ budgetLeft: 0, repeats: { [fingerprint]: 1 } });
    const atBudget = decideOne(propose("read_note", args), context(), start);
    expect(atBudget.counters).toEqual(start);
    const atRepeat = decideOne(
      propose("read_note", args),
      context({ maxRepeats: 1 }),
      fresh({ repeats: { [fingerprint]: 1 } }),
    );
    expect(refusal(atRepeat.decision)).toMatchObject({ check: "repeat" });
    expect(atRepeat.counters).toEqual(fresh({ repeats: { [fingerprint]: 1 } }));
  });

  it("reserves in order: with a budget of one, the second of two proposals is budget_exhausted", () => {
    const { decisions, counters } = decideAll(
      [propose("read_note", { note_id: "cs301.a" }), propose("read_note", { note_id: "cs301.b" })],
      context(),
      fresh({ budgetLeft: 1 }),
    );
    expect(decisions[0]?.type).toBe("allow");
    expect(refusal(decisions[1] as Decision)).toEqual({
      code: "budget_exhausted",
      check: "budget",
      withheld: undefined,
    });
    expect(counters.budgetLeft).toBe(0);
  });

  it("counts repeats across one step: the same call twice with max_repeats 1 is refused the second time", () => {
    const { decisions, counters } = decideAll(
      [propose("create_event", { title: "x", day: "mon" }), propose("create_event", '{"day":"mon","title":"x"}')],
      context({ maxRepeats: 1 }),
      fresh(),
    );
    expect(decisions[0]?.type).toBe("review");
    expect(refusal(decisions[1] as Decision)).toEqual({
      code: "repeated_action",
      check: "repeat",
      withheld: undefined,
    });
    expect(counters).toEqual({
      budgetLeft: 9,
      repeats: { [actionFingerprint("create_event", { title: "x", day: "mon" })]: 1 },
    });
  });

  it("does not mutate the counters it was given", () => {
    const start = fresh({ budgetLeft: 2 });
    const frozen = Object.freeze({ ...start, repeats: Object.freeze({ ...start.repeats }) });
    decideAll([propose("read_note", { note_id: "cs301.a" })], context(), frozen);
    expect(frozen).toEqual({ budgetLeft: 2, repeats: {} });
  });
});

describe("mayDecide: who may decide a review", () => {
  const owner = alice;
  const reviewer: Principal = {
    user_id: "rita",
    tenant: "uni",
    role: "reviewer",
    scopes: [REVIEWER_SCOPE],
    grants: {},
  };
  const foreignReviewer: Principal = { ...reviewer, user_id: "rex", tenant: "acme" };
  const otherStudent: Principal = { ...alice, user_id: "bob" };
  const ownerReviewer: Principal = { ...alice, scopes: [...alice.scopes, REVIEWER_SCOPE] };
  // Same user id in another tenant is another person.
  const namesake: Principal = { ...alice, tenant: "acme" };

  it.each([
    ["the owner", true, false, owner],
    ["a reviewer of the owner's tenant", true, true, reviewer],
    ["a reviewer of another tenant", false, false, foreignReviewer],
    ["another student of the tenant", false, false, otherStudent],
    ["the owner who is also a reviewer", true, false, ownerReviewer],
    ["the owner's user id in another tenant", false, false, namesake],
  ])("%s: owner_or_reviewer %s, reviewer_not_owner %s", (_label, ownerOrReviewer, reviewerNotOwner, approver) => {
    expect(mayDecide(approver, owner, "owner_or_reviewer")).toBe(ownerOrReviewer);
    expect(mayDecide(approver, owner, "reviewer_not_owner")).toBe(reviewerNotOwner);
  });
});

describe("refusals set by plan (planners/sanitize)", () => {
  it("denies a placeholder name at offered with the reason plan gave, and a replaced id at arguments", () => {
    const [badName] = sanitizeProposals(
      [{ call_id: "call_n", name: "read\u0000note", raw_arguments: '{"note_id":"cs301.x"}' }],
      [],
    );
    expect(refusal(decide(badName!))).toEqual({ code: "unknown_tool", check: "offered", withheld: undefined });
    expect(denial(decide(badName!)).message).toMatch(/^the proposed tool name contains U\+0000/);
    const [badId] = sanitizeProposals(
      [{ call_id: "call\u202e", name: "read_note", raw_arguments: '{"note_id":"cs301.x"}' }],
      [],
    );
    expect(refusal(decide(badId!))).toEqual({ code: "invalid_arguments", check: "arguments", withheld: undefined });
    expect(denial(decide(badId!)).call_id).toBe(badId?.call_id);
  });
});
