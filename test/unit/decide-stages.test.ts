/**
 * The pipeline's three stages (issue 24): every refusal is a Denial from the
 * one check runner, with the same code and check for the same cause whether
 * a call is proposed, answered by a reviewer, or about to run.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { buildCatalog } from "../../src/mcp/catalog.js";
import { ReviewPolicySchema } from "../../src/policy/config.js";
import { ToolContractSchema } from "../../src/policy/contracts.js";
import { decideAnswer, decideExecution, decideOne, STAGES } from "../../src/policy/decide.js";
import { approverRefusal, type Counters, type DecideContext } from "../../src/policy/checks.js";
import { CHECK_NAMES, type Decision } from "../../src/policy/decision.js";
import { deniedToolMessage } from "../../src/policy/refusal.js";
import { appendDenials } from "../../src/state.js";

const NOW = Date.parse("2026-03-02T10:00:00.000Z");
const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["calendar:write", "cases:write"],
  grants: {},
};
const rita: Principal = { ...alice, user_id: "rita" };

const { tools } = buildCatalog(
  {
    create_event: ToolContractSchema.parse({
      server: "calendar",
      risk: "write_reversible",
      scopes: ["calendar:write"],
      injected: { user_id: "principal.user_id" },
      approval_ttl_ms: 60_000,
    }),
    update_case: ToolContractSchema.parse({
      server: "cases",
      risk: "read",
      scopes: ["cases:write"],
      run_bound: { case_id: { from_request: "C-\\d{3,}" } },
    }),
  },
  {
    calendar: [
      {
        name: "create_event",
        inputSchema: { type: "object", properties: { user_id: { type: "string" }, title: { type: "string" } } },
      },
    ],
    cases: [
      {
        name: "update_case",
        inputSchema: { type: "object", properties: { case_id: { type: "string" }, note: { type: "string" } } },
      },
    ],
  },
);

function context(overrides: Partial<DecideContext> = {}): DecideContext {
  return {
    offer: { offered: ["create_event", "update_case"], withheld: [] },
    catalog: { find: (name) => tools.find((entry) => entry.name === name), isListed: () => true },
    owner: alice,
    threadId: "thread-stages",
    runBound: { case_id: "C-100" },
    reviewPolicy: ReviewPolicySchema.parse(undefined),
    maxRepeats: 2,
    now: NOW,
    ...overrides,
  };
}
const counters = (): Counters => ({ budgetLeft: 10, repeats: {} });

function decided(name: string, args: Record<string, unknown>): Decision {
  return decideOne({ call_id: `call_${name}`, name, raw_arguments: JSON.stringify(args) }, context(), counters())
    .decision;
}
function review(): Extract<Decision, { type: "review" }> {
  const decision = decided("create_event", { title: "Study" });
  if (decision.type !== "review") throw new Error(`expected a review, got ${decision.type}`);
  return decision;
}
function allow(name: string, args: Record<string, unknown>): Extract<Decision, { type: "allow" }> {
  const decision = decided(name, args);
  if (decision.type !== "allow") throw new Error(`expected allow, got ${decision.type}`);
  return decision;
}

describe("the stages", () => {
  it("run named checks only, and every name CHECK_NAMES promises is produced by some check", () => {
    const names = Object.values(STAGES).flatMap((checks) => checks.map((check) => check.name));
    for (const name of names) expect(CHECK_NAMES).toContain(name);
    // `review` also ends the propose stage (allow or ask); `approver` refuses a resume (approverRefusal).
    expect(new Set([...names, "review", "approver"])).toEqual(new Set(CHECK_NAMES));
    expect(STAGES.execute.map((check) => check.name)).toEqual(["execution", "run_bound", "authorized"]);
    expect(STAGES.edit.map((check) => check.name)).toEqual(["expiry", "review"]);
  });
});

describe("execute stage", () => {
  it("a scope revoked since the proposal is tool_not_permitted from authorized, as at the proposal", () => {
    const action = allow("update_case", { case_id: "C-100", note: "x" });
    const revoked = { ...alice, scopes: [] };
    const atExecution = decideExecution(action, context({ owner: revoked }));
    const atProposal = decideOne(
      { call_id: "again", name: "update_case", raw_arguments: JSON.stringify({ case_id: "C-100", note: "x" }) },
      context({ owner: revoked }),
      counters(),
    ).decision;
    expect(atExecution).toMatchObject({ ok: false, denial: { code: "tool_not_permitted", check: "authorized" } });
    expect(atProposal).toMatchObject({ type: "deny", code: "tool_not_permitted", check: "authorized" });
  });

  it("a run-bound argument that differs from the run's value is access_denied from run_bound", () => {
    const action = allow("update_case", { case_id: "C-100", note: "x" });
    expect(decideExecution(action, context({ runBound: { case_id: "C-200" } }))).toMatchObject({
      ok: false,
      denial: { type: "deny", call_id: action.call_id, code: "access_denied", check: "run_bound" },
    });
  });

  it("a tool gone from the catalog is server_unavailable from execution; a write already sent checks only that", () => {
    const action = allow("update_case", { case_id: "C-100", note: "x" });
    const empty = context({ catalog: { find: () => undefined, isListed: () => false } });
    expect(decideExecution(action, empty)).toMatchObject({
      ok: false,
      denial: { code: "server_unavailable", check: "execution" },
    });
    const revoked = context({ owner: { ...alice, scopes: [] } });
    expect(decideExecution(action, revoked, "still_listed")).toMatchObject({ ok: true });
    expect(decideExecution(action, context())).toMatchObject({ ok: true, tool: { name: "update_case" } });
  });
});

describe("edit stage: a reviewer's answer", () => {
  it("an answer at or after expires_at is approval_expired from expiry, whatever the answer", () => {
    const pending = review();
    const late = context({ now: Date.parse(pending.approval.expires_at) });
    for (const answer of [
      { type: "approve" as const },
      { type: "reject" as const },
      { type: "edit" as const, edited_action: { name: "create_event", args: { title: "Other" } } },
    ]) {
      expect(decideAnswer(pending, answer, late, counters(), alice).decision).toMatchObject({
        type: "deny",
        code: "approval_expired",
        check: "expiry",
      });
    }
  });

  it("reject is approval_rejected and a changed tool tool_not_permitted, both from review", () => {
    const pending = review();
    expect(
      decideAnswer(pending, { type: "reject", message: "no" }, context(), counters(), alice).decision,
    ).toMatchObject({
      code: "approval_rejected",
      check: "review",
      message: "rejected by alice (the owner): no",
    });
    const changed = { type: "edit" as const, edited_action: { name: "update_case", args: { note: "x" } } };
    expect(decideAnswer(pending, changed, context(), counters(), alice).decision).toMatchObject({
      code: "tool_not_permitted",
      check: "review",
    });
  });

  it("approve allows the reviewed action as it was; an edit is allowed as reviewed after the proposal checks", () => {
    const pending = review();
    expect(decideAnswer(pending, { type: "approve" }, context(), counters(), alice).decision).toMatchObject({
      type: "allow",
      fingerprint: pending.fingerprint,
    });
    const edit = { type: "edit" as const, edited_action: { name: "create_event", args: { title: "Other" } } };
    expect(decideAnswer(pending, edit, context(), counters(), alice).decision).toMatchObject({
      type: "allow",
      model_args: { title: "Other" },
    });
    const invalid = { type: "edit" as const, edited_action: { name: "create_event", args: { title: 7 } } };
    expect(decideAnswer(pending, invalid, context(), counters(), alice).decision).toMatchObject({
      type: "deny",
      check: "arguments",
    });
  });

  it("an approver the review policy does not allow is refused by the approver check, naming the action", () => {
    const pending = review();
    expect(approverRefusal(alice, alice, [pending])).toBeNull();
    expect(approverRefusal(rita, alice, [pending])).toMatchObject({
      check: "approver",
      code: "approver_not_permitted",
    });
  });
});

describe("one formatter, one record", () => {
  it("the model's tool message keeps the denial's check (and withheld)", () => {
    const denied = decideExecution(
      allow("update_case", { case_id: "C-100", note: "x" }),
      context({ owner: { ...alice, scopes: [] } }),
    );
    if (denied.ok) throw new Error("expected a denial");
    const message = deniedToolMessage(denied.denial);
    expect(message).toMatchObject({ tool_call_id: denied.denial.call_id, name: "update_case", status: "error" });
    expect(JSON.parse(message.content)).toEqual({
      error: { code: "tool_not_permitted", message: denied.denial.message, check: "authorized", withheld: "scope" },
    });
  });

  it("the denials field appends by call_id: a replayed denial is not added twice, the first stays", () => {
    const entry = {
      type: "deny" as const,
      call_id: "call_create_event",
      tool: "create_event",
      code: "approval_rejected" as const,
      check: "review" as const,
      message: "no",
      run_id: "run-1",
      stage: "edit" as const,
    };
    const once = appendDenials([], [entry]);
    expect(appendDenials(once, [{ ...entry, message: "replayed" }])).toBe(once);
    const other = { ...entry, call_id: "call_other" };
    expect(appendDenials(once, [other, other]).map((denial) => denial.call_id)).toEqual([entry.call_id, "call_other"]);
  });
});
