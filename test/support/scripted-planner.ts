/**
 * A strict scripted planner for control-plane tests: each turn is one scripted
 * step; an unexpected extra turn fails, and `assertDone` fails when scripted
 * steps were left unused.
 */
import type { PlanOutcome, Planner, PlannerInput } from "../../src/planners/planner.js";
import type { Proposal } from "../../src/policy/contracts.js";

export type ScriptStep = PlanOutcome | ((input: PlannerInput) => PlanOutcome);

export interface ScriptedPlanner extends Planner {
  readonly inputs: PlannerInput[];
  assertDone(): void;
}

let counter = 0;

/** A proposal with a unique id and the exact raw argument text given. */
export function proposal(name: string, args: Record<string, unknown> | string): Proposal {
  counter += 1;
  return {
    call_id: `call_test_${Date.now().toString(36)}_${counter}`,
    name,
    raw_arguments: typeof args === "string" ? args : JSON.stringify(args),
  };
}

export function calls(...proposals: Proposal[]): PlanOutcome {
  return { type: "tool_calls", calls: proposals };
}

export function scriptedPlanner(steps: ScriptStep[]): ScriptedPlanner {
  const inputs: PlannerInput[] = [];
  let next = 0;
  return {
    kind: "scripted",
    inputs,
    async plan(input) {
      inputs.push(input);
      const step = steps[next];
      if (step === undefined)
        throw new Error(`scripted planner: unexpected turn ${next + 1} (script has ${steps.length})`);
      next += 1;
      const outcome = typeof step === "function" ? step(input) : step;
      return { outcome, usage: { input_tokens: 10, output_tokens: 5 } };
    },
    assertDone() {
      if (next !== steps.length) throw new Error(`scripted planner: ${steps.length - next} scripted step(s) unused`);
    },
  };
}

/** A planner that never stops proposing (a fresh search every turn): only budgets end its runs. */
export function endlessPlanner(): Planner {
  let turn = 0;
  return {
    kind: "scripted",
    async plan() {
      turn += 1;
      return {
        outcome: calls(proposal("search_notes", { query: `attention variant ${turn}`, limit: 1 })),
        usage: { input_tokens: 100, output_tokens: 20 },
      };
    },
  };
}
