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
import type { PlanOutcome } from "./planner.js";
import type { Proposal } from "../policy/contracts.js";
import { SENSITIVE_KIND, type Redaction, type SecretScanner } from "../secrets/scanner.js";

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
    if (AIMessage.isInstance(message))
      for (const toolCall of message.tool_calls ?? []) if (toolCall.id) used.add(toolCall.id);
  }
  return calls.map((call) => {
    const idProblem = unsafeKeyReason(call.call_id);
    const nameProblem =
      call.name.length > MAX_IDENTIFIER_LENGTH
        ? `is longer than ${MAX_IDENTIFIER_LENGTH} characters`
        : unsafeKeyReason(call.name);
    const keepId =
      idProblem === undefined &&
      call.call_id.length > 0 &&
      call.call_id.length <= MAX_IDENTIFIER_LENGTH &&
      !used.has(call.call_id);
    const callId = keepId ? call.call_id : freshCallId();
    used.add(callId);
    const { refusal: _ignored, ...rest } = call;
    const sanitized: Proposal = {
      ...rest,
      call_id: callId,
      name: nameProblem === undefined ? call.name : INVALID_TOOL_NAME,
    };
    if (nameProblem !== undefined) {
      sanitized.refusal = {
        code: "unknown_tool",
        message: `the proposed tool name ${nameProblem}; no tool has such a name`,
      };
    } else if (idProblem !== undefined) {
      sanitized.refusal = {
        code: "invalid_arguments",
        message: `the tool-call id ${idProblem}; it was replaced by ${callId}`,
      };
    } else if (call.raw_arguments.length > MAX_ARGUMENT_BYTES) {
      // Each UTF-16 unit is at least one UTF-8 byte: this text is over the limit whatever it holds.
      sanitized.refusal = {
        code: "invalid_arguments",
        message: `arguments are longer than the limit of ${MAX_ARGUMENT_BYTES} bytes`,
      };
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
      return {
        ...outcome,
        answer: replaceUnstorable(outcome.answer),
        citations: outcome.citations.map(replaceUnstorable),
      };
    case "needs_human":
      return { ...outcome, reason: replaceUnstorable(outcome.reason) };
    case "tool_calls":
      return outcome.text === undefined ? outcome : { ...outcome, text: replaceUnstorable(outcome.text) };
  }
}

/** {@link sanitizeOutcome}, and for tool calls {@link sanitizeProposals}: the reply as the plan node may keep it. */
export function sanitizePlan(outcome: PlanOutcome, messages: readonly BaseMessage[]): PlanOutcome {
  const sanitized = sanitizeOutcome(outcome);
  return sanitized.type === "tool_calls"
    ? { ...sanitized, calls: sanitizeProposals(sanitized.calls, messages) }
    : sanitized;
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

/** Where a planner's reply held secrets: per proposal (`arguments`) or in its prose (`planner_text`). */
export interface PlanRedaction {
  where: "arguments" | "planner_text";
  /** The call id for arguments, the prose field otherwise. */
  subject: string;
  tool: string | null;
  found: Redaction[];
}

/**
 * A proposal's arguments without secrets (DESIGN: secrets stay out). Parsed
 * arguments are scanned as a value (sensitive fields by name, every string
 * and key by shape) and, when anything was found in them or in the raw text
 * (a duplicate key can hide a value the parsed object lost), stored
 * re-serialized from the redacted value, which means the same as before for
 * every check. Text that does not parse is scanned as text; for a tool with
 * sensitive fields it is replaced whole, as its fields cannot be told apart.
 * What a tool later receives is the redacted value: a marker never turns
 * back into the secret, so a model cannot carry a secret into an effect.
 */
export function redactProposal(
  call: Proposal,
  scanner: SecretScanner,
  sensitive: readonly string[],
): { call: Proposal; found: Redaction[] } {
  const parsed = call.raw_arguments === "" ? undefined : parseToolArguments(call.raw_arguments);
  if (parsed?.ok) {
    const value = scanner.value(parsed.value, "arguments", sensitive);
    const raw = scanner.text(call.raw_arguments, "arguments");
    if (value.found.length === 0 && raw.found.length === 0) return { call, found: [] };
    return {
      call: { ...call, raw_arguments: JSON.stringify(value.value) },
      found: value.found.length > 0 ? value.found : raw.found,
    };
  }
  if (sensitive.length > 0 && call.raw_arguments !== "") {
    const marker = scanner.marker(SENSITIVE_KIND, call.raw_arguments);
    return { call: { ...call, raw_arguments: marker }, found: [{ path: "arguments", kind: SENSITIVE_KIND, marker }] };
  }
  const text = scanner.text(call.raw_arguments, "arguments");
  return text.found.length === 0
    ? { call, found: [] }
    : { call: { ...call, raw_arguments: text.value }, found: text.found };
}

/**
 * The prose of a reply (answer, reason, text beside calls) without secret-shaped values, and each proposal
 * through {@link redactProposal}.
 */
export function redactOutcome(
  outcome: PlanOutcome,
  scanner: SecretScanner,
  sensitiveOf: (tool: string) => readonly string[],
): { outcome: PlanOutcome; redactions: PlanRedaction[] } {
  const redactions: PlanRedaction[] = [];
  const prose = (field: string, text: string): string => {
    const result = scanner.text(text, field);
    if (result.found.length > 0)
      redactions.push({ where: "planner_text", subject: field, tool: null, found: result.found });
    return result.value;
  };
  switch (outcome.type) {
    case "final":
      return { outcome: { ...outcome, answer: prose("answer", outcome.answer) }, redactions };
    case "needs_human":
      return { outcome: { ...outcome, reason: prose("reason", outcome.reason) }, redactions };
    case "tool_calls": {
      const calls = outcome.calls.map((call) => {
        const result = redactProposal(call, scanner, sensitiveOf(call.name));
        if (result.found.length > 0)
          redactions.push({ where: "arguments", subject: call.call_id, tool: call.name, found: result.found });
        return result.call;
      });
      const text = outcome.text === undefined ? {} : { text: prose("text", outcome.text) };
      return { outcome: { ...outcome, ...text, calls }, redactions };
    }
  }
}
