/** Why the run stopped, in plain words, with the server's code beside it. */
import type { TerminationReason } from "../types";

const BUDGETS: Record<string, string> = {
  model_turns: "model turns",
  tool_calls: "tool calls",
  deadline: "time",
  tokens: "tokens",
  cost: "cost",
};

export function plainReason(reason: TerminationReason): string {
  switch (reason.code) {
    case "final_answer":
      return "Answered.";
    case "abstained":
      return "The agent declined to answer: nothing you can access supports an answer.";
    case "needs_human":
      return "Stopped: a person needs to look at this.";
    case "budget_exhausted":
      return `Stopped: the ${BUDGETS[reason.budget ?? ""] ?? "run's"} budget ran out.`;
    case "repeated_action":
      return "Stopped: the agent kept proposing the same action.";
    case "no_progress":
      return "Stopped: the agent made no progress.";
    case "planner_error":
      return "Stopped: the planner failed.";
    case "unsupported_citation":
      return "Stopped: the answer cited something the run did not read.";
    case "tool_failure":
      return "Stopped: a tool failed.";
    default:
      return `Stopped (${reason.code}).`;
  }
}

export function Termination({ reason }: { reason: TerminationReason }) {
  return (
    <p className={`termination termination-${reason.code}`} data-testid="termination" data-code={reason.code}>
      <strong>{plainReason(reason)}</strong> <small>{reason.detail}</small> <code>{reason.code}</code>
    </p>
  );
}
