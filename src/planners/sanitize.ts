/**
 * What the plan node keeps of a planner's reply. A planner is untrusted
 * (DESIGN §11): its tool names, call ids and prose reach the checkpoint, the
 * ledger and the audit table, so nothing unstorable or unreadable is kept.
 * A bad name or id is never stored, not even in an error message: it is
 * replaced (a fresh `call_<uuid>`, the placeholder {@link INVALID_TOOL_NAME})
 * and the proposal carries a `refusal` that authorize turns into a denial
 * the model sees.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { replaceUnstorable, unsafeKeyReason } from "../policy/safe-text.js";
import { MAX_ARGUMENT_BYTES, parseToolArguments } from "../policy/arguments.js";
import type { PlanOutcome, Proposal } from "./planner.js";

/** Stands in for a tool name that could not be kept. No contract can match it: refusals are checked first. */
export const INVALID_TOOL_NAME = "invalid_tool_name";
/** Longest tool name or call id kept (OpenAI's own are far shorter). */
export const MAX_IDENTIFIER_LENGTH = 128;

function freshCallId(): string {
  return `call_${randomUUID()}`;
}

/**
 * Call ids key the ledger for the whole thread, so they must be unique
 * there; names and ids are stored in text columns, so they must be safe
 * identifiers. A planner's id is kept unless it repeats one already used or
 * is too long (a careless or hostile model may reuse ids; then a fresh id
 * replaces it and the call goes on), or contains control, bidi or
 * zero-width characters (then it is replaced and the proposal refused:
 * such an id is never the model's honest mistake). A name like that, or an
 * overlong one, becomes {@link INVALID_TOOL_NAME} and is refused as
 * `unknown_tool`. Argument text longer than the parser would ever accept is
 * not kept either (a hostile reply could fill every checkpoint with it).
 */
export function sanitizeProposals(calls: readonly Proposal[], messages: readonly BaseMessage[]): Proposal[] {
  const used = new Set<string>();
  for (const message of messages) {
    if (AIMessage.isInstance(message)) for (const toolCall of message.tool_calls ?? []) if (toolCall.id) used.add(toolCall.id);
  }
  return calls.map((call) => {
    const idProblem = unsafeKeyReason(call.call_id);
    const nameProblem = call.name.length > MAX_IDENTIFIER_LENGTH ? `is longer than ${MAX_IDENTIFIER_LENGTH} characters` : unsafeKeyReason(call.name);
    const keepId = idProblem === undefined && call.call_id.length > 0 && call.call_id.length <= MAX_IDENTIFIER_LENGTH && !used.has(call.call_id);
    const callId = keepId ? call.call_id : freshCallId();
    used.add(callId);
    const { refusal: _ignored, ...rest } = call;
    const sanitized: Proposal = { ...rest, call_id: callId, name: nameProblem === undefined ? call.name : INVALID_TOOL_NAME };
    if (nameProblem !== undefined) {
      sanitized.refusal = { code: "unknown_tool", message: `the proposed tool name ${nameProblem}; no tool has such a name` };
    } else if (idProblem !== undefined) {
      sanitized.refusal = { code: "invalid_arguments", message: `the tool-call id ${idProblem}; it was replaced by ${callId}` };
    } else if (call.raw_arguments.length > MAX_ARGUMENT_BYTES) {
      // Each UTF-16 unit is at least one UTF-8 byte: this text is over the limit whatever it holds.
      sanitized.refusal = { code: "invalid_arguments", message: `arguments are longer than the limit of ${MAX_ARGUMENT_BYTES} bytes` };
    }
    if (call.raw_arguments.length > MAX_ARGUMENT_BYTES) sanitized.raw_arguments = "";
    return sanitized;
  });
}

/**
 * The planner's prose (answer, citations, reason, text beside calls) made
 * storable: NUL, other C0 controls and lone surrogates become U+FFFD. Prose
 * is shown, not matched, so replacing beats failing the run; a citation so
 * changed matches no evidence and fails as `unsupported_citation`.
 */
export function sanitizeOutcome(outcome: PlanOutcome): PlanOutcome {
  switch (outcome.type) {
    case "final":
      return { ...outcome, answer: replaceUnstorable(outcome.answer), citations: outcome.citations.map(replaceUnstorable) };
    case "needs_human":
      return { ...outcome, reason: replaceUnstorable(outcome.reason) };
    case "tool_calls":
      return outcome.text === undefined ? outcome : { ...outcome, text: replaceUnstorable(outcome.text) };
  }
}

/**
 * The AI message recording proposals already passed through
 * {@link sanitizeProposals}. Arguments are stored parsed only when the
 * strict parser accepts them (bounded size and depth, storable strings);
 * otherwise as `{}`: the raw text stays in `proposals`, a plain string that
 * any checkpoint can hold, and authorize reports why it was refused.
 */
export function toolCallMessage(result: Extract<PlanOutcome, { type: "tool_calls" }>): AIMessage {
  return new AIMessage({
    content: result.text ?? "",
    tool_calls: result.calls.map((call) => {
      const parsed = call.refusal ? undefined : parseToolArguments(call.raw_arguments);
      return { id: call.call_id, name: call.name, args: parsed?.ok ? parsed.value : {}, type: "tool_call" as const };
    }),
  });
}
