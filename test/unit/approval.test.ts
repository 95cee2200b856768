/**
 * Approval interrupt payloads and strict binding of resume values (DESIGN §8).
 */
import { describe, expect, it } from "vitest";
import { bindResume, interruptPayload, type Binding } from "../../src/policy/approval.js";
import type { Decision } from "../../src/policy/decision.js";

type Review = Extract<Decision, { type: "review" }>;

function review(index: number): Review {
  return {
    type: "review",
    call_id: `call-${index}`,
    tool: index === 1 ? "add_event" : "send_email",
    server: "office",
    risk: index === 1 ? "write_reversible" : "write_irreversible",
    args: { title: `item ${index}`, user_id: "alice" },
    model_args: { title: `item ${index}` },
    fingerprint: String(index).repeat(64),
    description: `action ${index} needs your approval`,
    rule: "owner_or_reviewer",
    approval: {
      action_id: `action-${index}`,
      fingerprint: String(index).repeat(64),
      version: 1,
      requested_at: "2029-12-31T23:45:00.000Z",
      expires_at: "2030-01-01T00:00:00.000Z",
    },
  };
}

const first = review(1);
const second = review(2);
const pending = [first, second];

function expectRefused(binding: Binding): string {
  if (binding.ok) throw new Error("expected the resume value to be refused");
  expect(binding).toEqual({ ok: false, message: expect.any(String) });
  return binding.message;
}

function pairsOf(binding: Binding): [string, unknown][] {
  if (!binding.ok) throw new Error(`expected a binding, got: ${binding.message}`);
  return binding.pairs.map(({ review: bound, decision }) => [bound.approval.action_id, decision]);
}

describe("interruptPayload", () => {
  it("has one action request, review config and approval per pending review, in order", () => {
    expect(interruptPayload(pending)).toEqual({
      action_requests: [
        { name: "add_event", args: { title: "item 1" }, description: "action 1 needs your approval" },
        { name: "send_email", args: { title: "item 2" }, description: "action 2 needs your approval" },
      ],
      review_configs: [
        { action_name: "add_event", allowed_decisions: ["approve", "edit", "reject"], rule: "owner_or_reviewer" },
        { action_name: "send_email", allowed_decisions: ["approve", "edit", "reject"], rule: "owner_or_reviewer" },
      ],
      approvals: [
        {
          action_id: "action-1",
          fingerprint: "1".repeat(64),
          version: 1,
          requested_at: "2029-12-31T23:45:00.000Z",
          expires_at: "2030-01-01T00:00:00.000Z",
        },
        {
          action_id: "action-2",
          fingerprint: "2".repeat(64),
          version: 1,
          requested_at: "2029-12-31T23:45:00.000Z",
          expires_at: "2030-01-01T00:00:00.000Z",
        },
      ],
    });
  });

  it("shows the reviewer the model's arguments, never the host-injected ones", () => {
    const payload = interruptPayload([first]);
    expect(payload.action_requests[0]?.args).not.toHaveProperty("user_id");
  });

  it("has no error field and copies the approval (no shared reference)", () => {
    const payload = interruptPayload([first]);
    expect(payload).not.toHaveProperty("error");
    expect(payload.approvals[0]).not.toBe(first.approval);
  });

  it("is empty for no pending reviews", () => {
    expect(interruptPayload([])).toEqual({ action_requests: [], review_configs: [], approvals: [] });
  });
});

describe("bindResume: by position", () => {
  it("pairs decisions without ids with pending actions by position", () => {
    const binding = bindResume({ decisions: [{ type: "approve" }, { type: "reject", message: "no" }] }, pending);
    expect(pairsOf(binding)).toEqual([
      ["action-1", { type: "approve" }],
      ["action-2", { type: "reject", message: "no" }],
    ]);
  });

  it("accepts an edit with name and args", () => {
    const edit = { type: "edit", edited_action: { name: "add_event", args: { title: "renamed" } } };
    expect(pairsOf(bindResume({ decisions: [edit] }, [first]))).toEqual([["action-1", edit]]);
  });

  it("refuses fewer decisions than pending actions", () => {
    expect(expectRefused(bindResume({ decisions: [{ type: "approve" }] }, pending))).toBe(
      "expected 2 decision(s), got 1",
    );
  });

  it("refuses more decisions than pending actions", () => {
    expect(expectRefused(bindResume({ decisions: [{ type: "approve" }, { type: "approve" }] }, [first]))).toBe(
      "expected 1 decision(s), got 2",
    );
  });
});

describe("bindResume: by action_id", () => {
  it("binds by id regardless of order", () => {
    const binding = bindResume(
      {
        decisions: [
          { type: "reject", action_id: "action-2" },
          { type: "approve", action_id: "action-1" },
        ],
      },
      pending,
    );
    expect(pairsOf(binding)).toEqual([
      ["action-1", { type: "approve", action_id: "action-1" }],
      ["action-2", { type: "reject", action_id: "action-2" }],
    ]);
  });

  it("refuses an id that is not pending (in addition to the pending ones)", () => {
    const value = {
      decisions: [
        { type: "approve", action_id: "action-1" },
        { type: "approve", action_id: "action-2" },
        { type: "approve", action_id: "action-9" },
      ],
    };
    expect(expectRefused(bindResume(value, pending))).toBe("a decision names an action that is not pending");
  });

  it("refuses an unknown id in place of a pending one", () => {
    const value = {
      decisions: [
        { type: "approve", action_id: "action-1" },
        { type: "approve", action_id: "action-9" },
      ],
    };
    expect(expectRefused(bindResume(value, pending))).toBe("action action-2 needs exactly one decision");
  });

  it("refuses two decisions for one id", () => {
    const value = {
      decisions: [
        { type: "approve", action_id: "action-1" },
        { type: "reject", action_id: "action-1" },
        { type: "approve", action_id: "action-2" },
      ],
    };
    expect(expectRefused(bindResume(value, pending))).toBe("action action-1 needs exactly one decision");
  });

  it("refuses a mix of id-bound and positional decisions", () => {
    const value = { decisions: [{ type: "approve", action_id: "action-1" }, { type: "approve" }] };
    expect(expectRefused(bindResume(value, pending))).toBe("action action-2 needs exactly one decision");
  });
});

describe("bindResume: malformed values", () => {
  it.each([
    ["null", null],
    ["undefined", undefined],
    ["a string", "approve"],
    ["a number", 1],
    ["an array of decisions", [{ type: "approve" }]],
    ["decisions not an array", { decisions: "x" }],
    ["an empty decision list", { decisions: [] }],
    ["an unknown decision type", { decisions: [{ type: "maybe" }] }],
    ["a decision without a type", { decisions: [{ action_id: "action-1" }] }],
    ["an extra key on a decision", { decisions: [{ type: "approve", approver: "rita" }] }],
    ["an extra key at the top level", { decisions: [{ type: "approve" }], approver: "rita" }],
    ["an edit without args", { decisions: [{ type: "edit", edited_action: { name: "add_event" } }] }],
    ["an edit without edited_action", { decisions: [{ type: "edit" }] }],
    [
      "an edit with an array for args",
      { decisions: [{ type: "edit", edited_action: { name: "add_event", args: [] } }] },
    ],
    ["an empty action_id", { decisions: [{ type: "approve", action_id: "" }] }],
    ["a reject message over 2000 chars", { decisions: [{ type: "reject", message: "m".repeat(2001) }] }],
  ])("refuses %s", (_label, value) => {
    expectRefused(bindResume(value, [first]));
  });

  it("refuses a value larger than 64 KiB before parsing it", () => {
    const message = "m".repeat(70 * 1024);
    expect(expectRefused(bindResume({ decisions: [{ type: "reject", message }] }, [first]))).toBe(
      "the resume value is larger than 65536 bytes",
    );
  });

  it("refuses an oversized edit whose args the schema alone would accept", () => {
    const edit = { type: "edit", edited_action: { name: "add_event", args: { body: "x".repeat(65 * 1024) } } };
    expect(expectRefused(bindResume({ decisions: [edit] }, [first]))).toBe(
      "the resume value is larger than 65536 bytes",
    );
  });

  it("refuses a value that cannot be serialized", () => {
    const circular: Record<string, unknown> = { decisions: [{ type: "approve" }] };
    circular["self"] = circular;
    expect(expectRefused(bindResume(circular, [first]))).toBe("the resume value is not JSON");
  });

  it("refuses more than 64 decisions", () => {
    const many = Array.from({ length: 65 }, () => ({ type: "approve" }));
    expectRefused(
      bindResume(
        { decisions: many },
        Array.from({ length: 65 }, (_, index) => review(index)),
      ),
    );
  });
});
