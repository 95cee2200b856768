/**
 * human_review on the real graph (DESIGN §8): one interrupt per step for all
 * pending approvals, strict resume values bound to the exact action, edits
 * re-checked as new proposals, the approver read from the authenticated
 * resume, expiry on the host clock. In memory only (MemorySaver, memoryHost).
 */
import { describe, expect, it } from "vitest";
import type { Budgets } from "../../src/env.js";
import type { InterruptPayload } from "../../src/policy/resume.js";
import type { Proposal } from "../../src/policy/contracts.js";
import { actionFingerprint } from "../../src/policy/fingerprint.js";
import { graphHarness } from "../support/harness.js";
import { memoryHost, memoryTools } from "../support/memory-host.js";
import { calls, proposal, scriptedPlanner, type ScriptStep } from "../support/scripted-planner.js";

const alice = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  grants: { courses: ["cs301"] },
};
const bob = { user_id: "bob", tenant: "uni", role: "student", scopes: ["notes:read"], grants: { courses: ["cs301"] } };
const rita = {
  user_id: "rita",
  tenant: "uni",
  role: "reviewer",
  scopes: ["notes:read", "approvals:decide"],
  grants: {},
};

const FINAL: ScriptStep = { type: "final", answer: "done", citations: [], abstained: false };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The real graph on the in-memory host, one fresh thread. */
function harness(steps: ScriptStep[], options: { now?: () => number; budgets?: Partial<Budgets> } = {}) {
  const planner = scriptedPlanner(steps);
  const tools = memoryTools(() => ({ ok: true, text: '{"created":true}', structured: { created: true } }));
  const host = memoryHost({ planner, tools, ...options });
  const h = graphHarness(host, { principal: alice });
  return {
    ...h,
    planner,
    tools,
    start: () => h.start("schedule a study session"),
    values: async () => (await h.values()) as unknown as Record<string, unknown>,
    ledgerRows: () => host.ledgerStore.rows.get(h.threadId) ?? [],
  };
}

/** Starts a run whose first turn proposes `create_event` with `title`, and waits at the approval. */
async function pendingWrite(
  title = "study",
  options: Parameters<typeof harness>[1] = {},
  after: ScriptStep[] = [FINAL],
) {
  const write = proposal("create_event", { title });
  const h = harness([calls(write), ...after], options);
  await h.start();
  const [payload] = await h.interrupts();
  if (!payload) throw new Error("expected an approval interrupt");
  return { ...h, write, payload };
}

describe("human_review: the interrupt", () => {
  it("asks with the model's arguments, the three decisions and a bound approval; nothing runs before the resume", async () => {
    const h = await pendingWrite("study");
    const pending = await h.interrupts();
    expect(pending).toHaveLength(1);
    const payload = h.payload;

    expect(payload.action_requests).toHaveLength(1);
    expect(payload.action_requests[0]).toMatchObject({ name: "create_event", args: { title: "study" } });
    expect(payload.action_requests[0]?.args).toEqual({ title: "study" });
    expect(payload.action_requests[0]?.args).not.toHaveProperty("user_id");
    expect(payload.review_configs).toEqual([
      { action_name: "create_event", allowed_decisions: ["approve", "edit", "reject"], rule: "owner_or_reviewer" },
    ]);

    expect(payload.approvals).toHaveLength(1);
    const approval = payload.approvals[0];
    expect(approval).toEqual({
      action_id: expect.any(String),
      fingerprint: expect.any(String),
      version: 1,
      requested_at: expect.any(String),
      expires_at: expect.any(String),
    });
    expect(approval?.action_id.length).toBeGreaterThan(0);
    expect(approval?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(approval?.fingerprint).toBe(actionFingerprint("create_event", { title: "study" }));
    expect(approval?.expires_at).toMatch(ISO);
    expect(Number.isNaN(Date.parse(approval?.expires_at ?? ""))).toBe(false);
    expect(payload).not.toHaveProperty("error");

    expect(h.tools.calls).toEqual([]);
    expect(h.ledgerRows()).toEqual([]);
    expect((await h.values())["status"]).toBe("waiting_approval");
  });
});

describe("human_review: decisions", () => {
  it("approve runs the write exactly once, records one succeeded ledger row and completes", async () => {
    const h = await pendingWrite("study");
    await h.resume({ decisions: [{ type: "approve" }] });
    h.planner.assertDone();

    expect(h.tools.calls).toEqual([{ tool: "create_event", args: { title: "study", user_id: "alice" } }]);
    const rows = h.ledgerRows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      call_id: h.write.call_id,
      attempt: 1,
      tool: "create_event",
      risk: "write_reversible",
      status: "succeeded",
      fingerprint: actionFingerprint("create_event", { title: "study" }),
    });
    expect(await h.toolCode(h.write.call_id)).toBe("ok");
    const values = await h.values();
    expect(values["status"]).toBe("completed");
    expect(await h.interrupts()).toEqual([]);
  });

  it("reject with a message calls nothing, answers with approval_rejected and leaves the ledger empty", async () => {
    const h = await pendingWrite("study");
    await h.resume({ decisions: [{ type: "reject", message: "not today" }] });
    h.planner.assertDone();

    expect(h.tools.calls).toEqual([]);
    expect(await h.toolCode(h.write.call_id)).toBe("approval_rejected");
    expect(h.ledgerRows()).toEqual([]);
    expect((await h.values())["ledger"]).toEqual([]);
    expect((await h.values())["status"]).toBe("completed");
  });

  it("a rejection says who rejected: the owner, or the reviewer by name", async () => {
    const denialMessage = async (h: Awaited<ReturnType<typeof pendingWrite>>) =>
      ((await h.values())["decisions"] as { call_id: string; message?: string }[]).find(
        (decision) => decision.call_id === h.write.call_id,
      )?.message;
    const byOwner = await pendingWrite("study");
    await byOwner.resume({ decisions: [{ type: "reject", message: "not today" }] });
    expect(await denialMessage(byOwner)).toBe("rejected by alice (the owner): not today");
    const byReviewer = await pendingWrite("study");
    await byReviewer.resume({ decisions: [{ type: "reject" }] }, rita);
    expect(await byReviewer.toolCode(byReviewer.write.call_id)).toBe("approval_rejected");
    expect(await denialMessage(byReviewer)).toBe("rejected by rita (reviewer)");
  });

  it("a reviewer's edit keeps the run owner's injected identity, not the reviewer's", async () => {
    const h = await pendingWrite("study");
    await h.resume(
      { decisions: [{ type: "edit", edited_action: { name: "create_event", args: { title: "revised" } } }] },
      rita,
    );
    expect(h.tools.calls).toEqual([{ tool: "create_event", args: { title: "revised", user_id: "alice" } }]);
  });

  it("a valid edit is re-checked and runs with the edited title and the principal's injected user_id", async () => {
    const h = await pendingWrite("study");
    await h.resume({
      decisions: [{ type: "edit", edited_action: { name: "create_event", args: { title: "revised" } } }],
    });
    h.planner.assertDone();

    expect(h.tools.calls).toHaveLength(1);
    expect(h.tools.calls[0]?.tool).toBe("create_event");
    expect(h.tools.calls[0]?.args.title).toBe("revised");
    expect(h.tools.calls[0]?.args.user_id).toBe("alice");
    expect(h.tools.calls[0]?.args).toEqual({ title: "revised", user_id: "alice" });
    const rows = h.ledgerRows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      call_id: h.write.call_id,
      status: "succeeded",
      fingerprint: actionFingerprint("create_event", { title: "revised" }),
    });
  });

  it.each([
    ["an unknown key", { title: "revised", color: "red" }],
    ["the host-injected user_id", { title: "revised", user_id: "bob" }],
    ["a missing required title", {}],
    ["a title of the wrong type", { title: 42 }],
  ])("an edit with %s is denied as invalid_arguments and not executed", async (_label, args) => {
    const h = await pendingWrite("study");
    await h.resume({ decisions: [{ type: "edit", edited_action: { name: "create_event", args } }] });
    h.planner.assertDone();

    expect(h.tools.calls).toEqual([]);
    expect(await h.toolCode(h.write.call_id)).toBe("invalid_arguments");
    expect(h.ledgerRows()).toEqual([]);
  });

  it.each([
    ["another listed tool", "read_note", { note_id: "cs301.a" }],
    ["an unknown tool", "delete_everything", { title: "study" }],
  ])(
    "an edit that changes the tool to %s is denied as tool_not_permitted and not executed",
    async (_label, name, args) => {
      const h = await pendingWrite("study");
      await h.resume({ decisions: [{ type: "edit", edited_action: { name, args } }] });
      h.planner.assertDone();

      expect(h.tools.calls).toEqual([]);
      expect(await h.toolCode(h.write.call_id)).toBe("tool_not_permitted");
      expect(h.ledgerRows()).toEqual([]);
    },
  );
});

describe("human_review: malformed resume values", () => {
  const malformed: [string, unknown][] = [
    ["a bare string", "yes"],
    ["an empty object", {}],
    ["no decisions", { decisions: [] }],
    ["two decisions for one action", { decisions: [{ type: "approve" }, { type: "approve" }] }],
    ["an unknown decision type", { decisions: [{ type: "accept" }] }],
    ["an unknown key on a decision", { decisions: [{ type: "approve", note: "ok" }] }],
    ["decisions that are not a list", { decisions: "approve" }],
    ["an edit without edited_action", { decisions: [{ type: "edit" }] }],
  ];

  it.each(malformed)(
    "%s re-asks the same approvals with invalid_resume; a following approve runs the write once",
    async (_label, value) => {
      const h = await pendingWrite("study");
      await expect(h.resume(value)).resolves.toBeDefined();

      const pending = await h.interrupts();
      expect(pending).toHaveLength(1);
      expect(pending[0]?.error?.code).toBe("invalid_resume");
      expect(pending[0]?.approvals).toEqual(h.payload.approvals);
      expect(pending[0]?.action_requests).toEqual(h.payload.action_requests);
      expect(h.tools.calls).toEqual([]);
      expect(h.ledgerRows()).toEqual([]);
      expect((await h.values())["status"]).toBe("waiting_approval");

      await h.resume({ decisions: [{ type: "approve" }] });
      h.planner.assertDone();
      expect(h.tools.calls).toEqual([{ tool: "create_event", args: { title: "study", user_id: "alice" } }]);
      expect(h.ledgerRows().map((row) => row.status)).toEqual(["succeeded"]);
      expect((await h.values())["status"]).toBe("completed");
    },
  );

  it("survives every malformed value in a row on one thread, then approves once", async () => {
    const h = await pendingWrite("study");
    for (const [label, value] of malformed) {
      await h.resume(value);
      const pending = await h.interrupts();
      expect(pending, label).toHaveLength(1);
      expect(pending[0]?.error?.code, label).toBe("invalid_resume");
      expect(pending[0]?.approvals, label).toEqual(h.payload.approvals);
    }
    expect(h.tools.calls).toEqual([]);

    await h.resume({ decisions: [{ type: "approve" }] });
    h.planner.assertDone();
    expect(h.tools.calls).toHaveLength(1);
    expect(h.ledgerRows()).toHaveLength(1);
    expect((await h.values())["status"]).toBe("completed");
  });
});

describe("human_review: binding by action_id", () => {
  it("a decision naming the pending action_id approves it", async () => {
    const h = await pendingWrite("study");
    const actionId = h.payload.approvals[0]?.action_id;
    await h.resume({ decisions: [{ type: "approve", action_id: actionId }] });
    h.planner.assertDone();

    expect(h.tools.calls).toEqual([{ tool: "create_event", args: { title: "study", user_id: "alice" } }]);
    expect(h.ledgerRows().map((row) => row.status)).toEqual(["succeeded"]);
  });

  it("a decision naming an action that is not pending is refused with invalid_resume and runs nothing", async () => {
    const h = await pendingWrite("study");
    await h.resume({ decisions: [{ type: "approve", action_id: "not-a-pending-action" }] });

    const pending = await h.interrupts();
    expect(pending).toHaveLength(1);
    expect(pending[0]?.error?.code).toBe("invalid_resume");
    expect(pending[0]?.approvals).toEqual(h.payload.approvals);
    expect(h.tools.calls).toEqual([]);
    expect(h.ledgerRows()).toEqual([]);

    await h.resume({ decisions: [{ type: "approve", action_id: h.payload.approvals[0]?.action_id }] });
    h.planner.assertDone();
    expect(h.tools.calls).toHaveLength(1);
  });

  it("the right id plus an extra decision for an unknown id is refused", async () => {
    const h = await pendingWrite("study");
    const actionId = h.payload.approvals[0]?.action_id;
    await h.resume({
      decisions: [
        { type: "approve", action_id: actionId },
        { type: "approve", action_id: "other" },
      ],
    });

    expect((await h.interrupts())[0]?.error?.code).toBe("invalid_resume");
    expect(h.tools.calls).toEqual([]);
  });
});

describe("human_review: the approver", () => {
  it("another student may not decide: re-asked with approver_not_permitted, nothing runs", async () => {
    const h = await pendingWrite("study");
    await h.resume({ decisions: [{ type: "approve" }] }, bob);

    const pending = await h.interrupts();
    expect(pending).toHaveLength(1);
    expect(pending[0]?.error?.code).toBe("approver_not_permitted");
    expect(pending[0]?.approvals).toEqual(h.payload.approvals);
    expect(h.tools.calls).toEqual([]);
    expect(h.ledgerRows()).toEqual([]);
    expect((await h.values())["status"]).toBe("waiting_approval");
  });

  it("a body claiming to be the owner does not make another student an approver", async () => {
    const h = await pendingWrite("study");
    await h.resume({ decisions: [{ type: "approve" }], user_id: "alice" }, bob);
    const pending = await h.interrupts();
    expect(pending[0]?.error?.code).toBe("approver_not_permitted");
    expect(h.tools.calls).toEqual([]);
  });

  it("a reviewer with approvals:decide may approve the owner's action", async () => {
    const h = await pendingWrite("study");
    await h.resume({ decisions: [{ type: "approve" }] }, rita);
    h.planner.assertDone();

    expect(h.tools.calls).toEqual([{ tool: "create_event", args: { title: "study", user_id: "alice" } }]);
    expect(h.ledgerRows().map((row) => row.status)).toEqual(["succeeded"]);
    expect((await h.values())["status"]).toBe("completed");
  });

  it("after a refused non-approver, a reviewer's approve runs the write once", async () => {
    const h = await pendingWrite("study");
    await h.resume({ decisions: [{ type: "approve" }] }, bob);
    expect(h.tools.calls).toEqual([]);

    await h.resume({ decisions: [{ type: "approve" }] }, rita);
    h.planner.assertDone();
    expect(h.tools.calls).toHaveLength(1);
    expect(h.ledgerRows()).toHaveLength(1);
  });

  // Regression (fixed: one interrupt per node run, a refused answer routes back to a fresh task). Before: the node re-ran from the start on
  // every resume and LangGraph replays every earlier resume value into the
  // earlier `interrupt()` calls, but `mayDecide` checks the principal of the
  // *current* resume. So a value that was refused because bob sent it is
  // re-evaluated with alice's authority on her next resume: bob's "approve"
  // wins over alice's "reject" and the write runs.
  it("a refused non-approver's decision is not replayed under the owner's later resume", async () => {
    const h = await pendingWrite("study");
    await h.resume({ decisions: [{ type: "approve" }] }, bob);
    expect((await h.interrupts())[0]?.error?.code).toBe("approver_not_permitted");

    await h.resume({ decisions: [{ type: "reject", message: "no" }] }, alice);
    expect(h.tools.calls).toEqual([]);
    expect(h.ledgerRows()).toEqual([]);
    expect(await h.toolCode(h.write.call_id)).toBe("approval_rejected");
  });

  // Same regression as above, the other way round:
  // bob's refused "reject" is replayed under the reviewer's authority and
  // overrides the reviewer's own "approve".
  it("a refused non-approver's reject does not override a reviewer's later approve", async () => {
    const h = await pendingWrite("study");
    await h.resume({ decisions: [{ type: "reject", message: "no" }] }, bob);
    expect((await h.interrupts())[0]?.error?.code).toBe("approver_not_permitted");

    await h.resume({ decisions: [{ type: "approve" }] }, rita);
    expect(h.tools.calls).toEqual([{ tool: "create_event", args: { title: "study", user_id: "alice" } }]);
    expect(h.ledgerRows().map((row) => row.status)).toEqual(["succeeded"]);
  });
});

describe("human_review: expiry", () => {
  const START = Date.parse("2030-01-01T00:00:00.000Z");
  // The run's deadline budget is widened so only the approval's expiry is under test.
  const budgets = { deadline_ms: 24 * 60 * 60 * 1000 };

  it("an approve after expires_at is denied as approval_expired and nothing runs", async () => {
    let clock = START;
    const h = await pendingWrite("study", { now: () => clock, budgets });
    const expiresAt = Date.parse(h.payload.approvals[0]?.expires_at ?? "");
    expect(expiresAt).toBeGreaterThan(START);

    clock = expiresAt + 1;
    await h.resume({ decisions: [{ type: "approve" }] });
    h.planner.assertDone();

    expect(h.tools.calls).toEqual([]);
    expect(await h.toolCode(h.write.call_id)).toBe("approval_expired");
    expect(h.ledgerRows()).toEqual([]);
    expect(await h.interrupts()).toEqual([]);
  });

  it("an approve exactly at expires_at is expired too", async () => {
    let clock = START;
    const h = await pendingWrite("study", { now: () => clock, budgets });
    clock = Date.parse(h.payload.approvals[0]?.expires_at ?? "");
    await h.resume({ decisions: [{ type: "approve" }] });

    expect(h.tools.calls).toEqual([]);
    expect(await h.toolCode(h.write.call_id)).toBe("approval_expired");
  });

  it("an approve just before expires_at still runs", async () => {
    let clock = START;
    const h = await pendingWrite("study", { now: () => clock, budgets });
    clock = Date.parse(h.payload.approvals[0]?.expires_at ?? "") - 1;
    await h.resume({ decisions: [{ type: "approve" }] });
    h.planner.assertDone();

    expect(h.tools.calls).toHaveLength(1);
    expect(h.ledgerRows().map((row) => row.status)).toEqual(["succeeded"]);
  });

  it("an edit after expires_at is denied as approval_expired as well", async () => {
    let clock = START;
    const h = await pendingWrite("study", { now: () => clock, budgets });
    clock = Date.parse(h.payload.approvals[0]?.expires_at ?? "") + 60_000;
    await h.resume({ decisions: [{ type: "edit", edited_action: { name: "create_event", args: { title: "late" } } }] });

    expect(h.tools.calls).toEqual([]);
    expect(await h.toolCode(h.write.call_id)).toBe("approval_expired");
  });
});

describe("human_review: the approval record", () => {
  it("records the authenticated approver, the bound action and the outcome before the write runs", async () => {
    const h = await pendingWrite("study");
    const approval = h.payload.approvals[0]!;
    let recordedBeforeCall = false;
    const call = h.tools.call.bind(h.tools);
    h.tools.call = async (...args) => {
      recordedBeforeCall = h.host.approvalStore.rows.length === 1;
      return call(...args);
    };
    await h.resume({ decisions: [{ type: "approve" }] }, rita);
    expect(recordedBeforeCall).toBe(true);
    expect(h.host.approvalStore.rows).toEqual([
      expect.objectContaining({
        call_id: h.write.call_id,
        tool: "create_event",
        action_id: approval.action_id,
        version: 1,
        fingerprint: approval.fingerprint,
        outcome: "approve",
        edited_fingerprint: null,
        approver: "rita",
        approver_tenant: "uni",
        owner: "alice",
        expires_at: approval.expires_at,
      }),
    ]);
    const decisions = (await h.values())["decisions"] as { review?: { approver: string; outcome: string } }[];
    expect(decisions[0]?.review).toMatchObject({ approver: "rita", outcome: "approve" });
  });

  it("records rejects, edits (with the edited fingerprint) and expiries; refused resumes leave no record", async () => {
    const rejected = await pendingWrite("study");
    await rejected.resume("not a decision");
    expect(rejected.host.approvalStore.rows).toEqual([]);
    await rejected.resume({ decisions: [{ type: "reject", message: "no" }] });
    expect(rejected.host.approvalStore.rows.map((row) => row.outcome)).toEqual(["reject"]);

    const edited = await pendingWrite("study");
    await edited.resume({
      decisions: [{ type: "edit", edited_action: { name: "create_event", args: { title: "revised" } } }],
    });
    expect(edited.host.approvalStore.rows[0]).toMatchObject({
      outcome: "edit",
      edited_fingerprint: actionFingerprint("create_event", { title: "revised" }),
    });

    let clock = Date.parse("2030-01-01T00:00:00.000Z");
    const expired = await pendingWrite("study", { now: () => clock, budgets: { deadline_ms: 24 * 3600 * 1000 } });
    clock += 16 * 60_000;
    await expired.resume({ decisions: [{ type: "approve" }] });
    expect(expired.host.approvalStore.rows.map((row) => row.outcome)).toEqual(["expired"]);
    expect(expired.tools.calls).toEqual([]);
  });
});

describe("human_review: waiting for a reviewer does not spend the run's deadline", () => {
  const START = Date.parse("2030-01-01T00:00:00.000Z");
  const budgets = { deadline_ms: 60_000 };

  it("a decision ten minutes later still lets the run finish with its answer", async () => {
    let clock = START;
    const h = await pendingWrite("study", { now: () => clock, budgets });
    clock = START + 10 * 60_000;
    await h.resume({ decisions: [{ type: "approve" }] });
    h.planner.assertDone();
    const values = await h.values();
    expect(values["status"]).toBe("completed");
    expect(values["review_waits"]).toMatchObject({ by_call: { [h.write.call_id]: 10 * 60_000 } });
  });

  it("a refused answer and a later valid one count the wait once, up to the valid answer", async () => {
    let clock = START;
    const h = await pendingWrite("study", { now: () => clock, budgets });
    clock = START + 5 * 60_000;
    await h.resume("yes");
    clock = START + 9 * 60_000;
    await h.resume({ decisions: [{ type: "approve" }] });
    const values = await h.values();
    expect(values["status"]).toBe("completed");
    expect(values["review_waits"]).toMatchObject({ by_call: { [h.write.call_id]: 9 * 60_000 } });
  });

  it("the agent's own time still counts: past the deadline after the review, the run stops", async () => {
    let clock = START;
    // The planner's next turn happens after the agent has worked past its deadline (not counting the review).
    const slow: ScriptStep = () => {
      clock += 61_000;
      return { type: "tool_calls", calls: [proposal("read_note", { note_id: "n1" })] };
    };
    const h = await pendingWrite("study", { now: () => clock, budgets }, [slow]);
    clock = START + 5 * 60_000;
    await h.resume({ decisions: [{ type: "approve" }] });
    const values = await h.values();
    expect(values["termination_reason"]).toMatchObject({ code: "budget_exhausted", budget: "deadline" });
  });
});

describe("human_review: several writes in one step", () => {
  async function twoWrites() {
    const first: Proposal = proposal("create_event", { title: "first" });
    const second: Proposal = proposal("create_event", { title: "second" });
    const h = harness([calls(first, second), FINAL]);
    await h.start();
    return { ...h, first, second };
  }

  it("asks once for both, and positional [approve, reject] runs only the first", async () => {
    const h = await twoWrites();
    const pending = await h.interrupts();
    expect(pending).toHaveLength(1);
    const payload = pending[0] as InterruptPayload;
    expect(payload.action_requests.map((request) => request.args)).toEqual([{ title: "first" }, { title: "second" }]);
    expect(payload.review_configs.map((config) => config.action_name)).toEqual(["create_event", "create_event"]);
    expect(payload.approvals).toHaveLength(2);
    expect(new Set(payload.approvals.map((approval) => approval.action_id)).size).toBe(2);
    expect(payload.approvals.map((approval) => approval.fingerprint)).toEqual([
      actionFingerprint("create_event", { title: "first" }),
      actionFingerprint("create_event", { title: "second" }),
    ]);
    expect(h.tools.calls).toEqual([]);

    await h.resume({ decisions: [{ type: "approve" }, { type: "reject", message: "only one" }] });
    h.planner.assertDone();

    expect(h.tools.calls).toEqual([{ tool: "create_event", args: { title: "first", user_id: "alice" } }]);
    expect(h.ledgerRows().map((row) => [row.call_id, row.status])).toEqual([[h.first.call_id, "succeeded"]]);
    expect(await h.toolCode(h.first.call_id)).toBe("ok");
    expect(await h.toolCode(h.second.call_id)).toBe("approval_rejected");
    expect((await h.values())["status"]).toBe("completed");
  });

  it("one decision for two pending actions is refused with invalid_resume", async () => {
    const h = await twoWrites();
    await h.resume({ decisions: [{ type: "approve" }] });
    const pending = await h.interrupts();
    expect(pending).toHaveLength(1);
    expect(pending[0]?.error?.code).toBe("invalid_resume");
    expect(pending[0]?.approvals).toHaveLength(2);
    expect(h.tools.calls).toEqual([]);
  });

  it("decisions bound by action_id apply regardless of their order", async () => {
    const h = await twoWrites();
    const [firstApproval, secondApproval] = (await h.interrupts())[0]?.approvals ?? [];
    await h.resume({
      decisions: [
        { type: "approve", action_id: secondApproval?.action_id },
        { type: "reject", action_id: firstApproval?.action_id },
      ],
    });
    h.planner.assertDone();

    expect(h.tools.calls).toEqual([{ tool: "create_event", args: { title: "second", user_id: "alice" } }]);
    expect(await h.toolCode(h.first.call_id)).toBe("approval_rejected");
    expect(await h.toolCode(h.second.call_id)).toBe("ok");
  });
});
