/**
 * Run status transitions (DESIGN §4): the table, multi-hop `transition`, and
 * the `status` channel reducer.
 */
import { describe, expect, it } from "vitest";
import { isInvariantError } from "../../src/errors.js";
import {
  RUN_STATUSES,
  TERMINAL_STATUSES,
  assertTransition,
  canTransition,
  isTerminal,
  statusReducer,
  transition,
  type RunStatus,
} from "../../src/state/transitions.js";

/** The legal transitions, written out independently of the source table. */
const EXPECTED_LEGAL: Record<RunStatus, RunStatus[]> = {
  created: ["planning", "cancelled"],
  planning: ["tool_proposed", "observing", "cancelled"],
  tool_proposed: ["tool_authorized", "waiting_approval", "observing", "cancelled"],
  waiting_approval: ["tool_authorized", "planning", "observing", "cancelled"],
  tool_authorized: ["tool_running", "cancelled"],
  tool_running: ["observing", "failed", "cancelled"],
  observing: ["planning", "completed", "abstained", "needs_human", "stopped", "failed", "cancelled"],
  completed: ["planning", "cancelled"],
  abstained: ["planning", "cancelled"],
  needs_human: ["planning", "cancelled"],
  stopped: ["planning", "cancelled"],
  failed: ["planning", "cancelled"],
  cancelled: ["planning"],
};

const LEGAL_PAIRS = RUN_STATUSES.flatMap((from) => EXPECTED_LEGAL[from].map((to) => [from, to] as const));
const ILLEGAL_PAIRS = RUN_STATUSES.flatMap((from) =>
  RUN_STATUSES.filter((to) => !EXPECTED_LEGAL[from].includes(to)).map((to) => [from, to] as const),
);

/** Runs `action`, expecting an `illegal_transition` InvariantError; returns its message. */
function expectIllegal(action: () => unknown): string {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected an illegal_transition error").toBeDefined();
  expect(isInvariantError(caught)).toBe(true);
  expect((caught as { code?: unknown }).code).toBe("illegal_transition");
  return (caught as Error).message;
}

describe("transition table", () => {
  it("lists every status exactly once in the expected table", () => {
    expect(Object.keys(EXPECTED_LEGAL).sort()).toEqual([...RUN_STATUSES].sort());
    expect(LEGAL_PAIRS.length + ILLEGAL_PAIRS.length).toBe(RUN_STATUSES.length ** 2);
  });

  it.each(LEGAL_PAIRS)("accepts %s → %s", (from, to) => {
    expect(canTransition(from, to)).toBe(true);
    expect(() => assertTransition(from, to)).not.toThrow();
    expect(transition(from, to)).toEqual({ status: [to] });
  });

  it.each(ILLEGAL_PAIRS)("rejects %s → %s", (from, to) => {
    expect(canTransition(from, to)).toBe(false);
  });

  it.each([
    ["created", "tool_running"],
    ["tool_authorized", "observing"],
    ["cancelled", "observing"],
    ["completed", "tool_proposed"],
    ["created", "completed"],
    ["planning", "tool_running"],
    ["tool_proposed", "tool_running"],
    ["waiting_approval", "tool_running"],
    ["tool_running", "planning"],
    ["observing", "tool_proposed"],
  ] as const)("assertTransition(%s, %s) throws illegal_transition naming both", (from, to) => {
    const message = expectIllegal(() => assertTransition(from, to));
    expect(message).toContain(from);
    expect(message).toContain(to);
  });
});

describe("terminal statuses", () => {
  it("are exactly the six of DESIGN §4", () => {
    expect([...TERMINAL_STATUSES].sort()).toEqual([
      "abstained",
      "cancelled",
      "completed",
      "failed",
      "needs_human",
      "stopped",
    ]);
    for (const status of RUN_STATUSES) {
      expect(isTerminal(status)).toBe((TERMINAL_STATUSES as readonly string[]).includes(status));
    }
  });

  it.each(["completed", "abstained", "needs_human", "stopped", "failed"] as const)(
    "%s accepts a new run (→ planning)",
    (status) => {
      expect(canTransition(status, "planning")).toBe(true);
      expect(statusReducer(status, "planning")).toBe("planning");
    },
  );

  it.each(["completed", "abstained", "needs_human", "stopped", "failed"] as const)(
    "%s does not resume mid-run",
    (status) => {
      for (const to of ["tool_proposed", "waiting_approval", "tool_authorized", "tool_running", "observing"] as const) {
        expect(canTransition(status, to)).toBe(false);
      }
    },
  );

  it.each(["completed", "abstained", "needs_human", "stopped", "failed", "cancelled"] as const)(
    "%s does not resume mid-run (cancelled included)",
    (status) => {
      for (const to of ["tool_proposed", "waiting_approval", "tool_authorized", "tool_running", "observing"] as const) {
        expect(canTransition(status, to)).toBe(false);
      }
    },
  );

  // A cancelled run is never resumed; only a new request (planning) moves its thread on.
  it.each(RUN_STATUSES.filter((status) => status !== "planning" && status !== "cancelled"))(
    "cancelled → %s is illegal",
    (to) => {
      expectIllegal(() => assertTransition("cancelled", to));
      expectIllegal(() => transition("cancelled", to));
      expectIllegal(() => statusReducer("cancelled", to));
    },
  );
});

describe("transition(from, ...hops)", () => {
  it("returns every hop in order", () => {
    expect(transition("tool_authorized", "tool_running", "observing")).toEqual({
      status: ["tool_running", "observing"],
    });
    expect(transition("observing", "planning", "tool_proposed", "waiting_approval", "tool_authorized")).toEqual({
      status: ["planning", "tool_proposed", "waiting_approval", "tool_authorized"],
    });
  });

  it("checks the first hop against `from`", () => {
    const message = expectIllegal(() => transition("created", "tool_proposed", "tool_authorized"));
    expect(message).toContain("created → tool_proposed");
  });

  it("checks a later hop against the previous hop, not against `from`", () => {
    // tool_authorized → tool_running is legal, tool_running → tool_authorized is not.
    const message = expectIllegal(() => transition("tool_authorized", "tool_running", "tool_authorized"));
    expect(message).toContain("tool_running → tool_authorized");
    // completed may follow observing, but here it follows planning.
    expectIllegal(() => transition("tool_running", "observing", "planning", "completed"));
  });

  it("with no hops returns an empty list", () => {
    expect(transition("planning")).toEqual({ status: [] });
  });
});

describe("statusReducer", () => {
  it("accepts a single legal value", () => {
    expect(statusReducer("created", "planning")).toBe("planning");
    expect(statusReducer("tool_running", "failed")).toBe("failed");
  });

  it("rejects a single illegal value", () => {
    expectIllegal(() => statusReducer("created", "tool_running"));
    expectIllegal(() => statusReducer("tool_authorized", "observing"));
  });

  it("applies an array of hops and returns the last", () => {
    expect(statusReducer("tool_authorized", ["tool_running", "observing"])).toBe("observing");
    expect(statusReducer("observing", ["completed", "planning", "tool_proposed"])).toBe("tool_proposed");
  });

  it("checks every hop of an array", () => {
    const message = expectIllegal(() => statusReducer("tool_authorized", ["tool_running", "planning"]));
    expect(message).toContain("tool_running → planning");
  });

  it("accepts the value of `transition` as its update", () => {
    const update = transition("tool_authorized", "tool_running", "observing");
    expect(statusReducer("tool_authorized", update.status)).toBe("observing");
  });

  it("treats a repeated current value as no change and an empty array as no update", () => {
    // A node re-stating the current status (e.g. a retry inside tool_running) is not a transition.
    expect(statusReducer("tool_running", "tool_running")).toBe("tool_running");
    expect(statusReducer("tool_authorized", ["tool_running", "tool_running", "observing"])).toBe("observing");
    expect(statusReducer("planning", [])).toBe("planning");
  });
});
