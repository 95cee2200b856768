/** The assistant needs a fact (a run that ended `needs_human` with a question): asked as a question, answered below. */
import { isRecord } from "../read";
import type { AgentValues } from "../types";

/** The question a run that needs a person asks, or null: `pending.question`, else the reason without its code. */
export function questionOf(values: AgentValues): string | null {
  const reason = values.termination_reason;
  if (!isRecord(reason) || reason.code !== "needs_human") return null;
  const pending = values.pending;
  if (isRecord(pending) && typeof pending.question === "string" && pending.question.trim()) return pending.question;
  const detail = typeof reason.detail === "string" ? reason.detail : "";
  const text = detail.replace(/^[a-z_]+:\s*/, "").trim();
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
