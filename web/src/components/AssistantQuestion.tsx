/** The assistant needs a fact (a run that ended `needs_human` with a question): asked as a question, answered below. */
import { isRecord } from "../read";
import type { AgentValues } from "../types";

/** The question a run that needs a person asks, or null: `pending.question`, else the reason without its code. */
export function questionOf(values: AgentValues): string | null {
  const reason = values.termination_reason;
  if (!isRecord(reason) || reason.code !== "needs_human") return null;
  const pending = values.pending;
  const asked = isRecord(pending) && typeof pending.question === "string" ? pending.question : "";
  const detail = typeof reason.detail === "string" ? reason.detail : "";
  // The reason's code (`missing_start: …`) is for programs; the person reads the question.
  const text = (asked.trim() ? asked : detail).replace(/^[a-z_]+:\s*/, "").trim();
  return text || null;
}

export function AssistantQuestion({ question }: { question: string }) {
  return (
    <div className="message ai question" data-testid="assistant-question" role="note" aria-label="The assistant asks">
      <span className="speaker">Assistant asks</span>
      <p>{question.charAt(0).toUpperCase() + question.slice(1)}</p>
    </div>
  );
}
