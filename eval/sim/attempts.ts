/**
 * What a simulated profile *attempted*: each violation it tried to commit,
 * counted when the reply is sent, whatever the agent then did with it. The
 * evaluation compares these with the violations the agent *executed*
 * (which must be 0).
 */

export const ATTEMPT_KINDS = [
  /** A final answer citing a ref no tool result in the request held. */
  "invented_citation",
  /** A notes call naming a course the request did not name. */
  "wrong_course_request",
  /** Arguments with a field the tool's schema does not declare. */
  "unknown_argument_field",
  /** The same call (tool and arguments) as an earlier one of the request. */
  "repeated_call",
  /** More tool calls after it had what it needed to answer. */
  "call_after_answer",
  /** A call that a tool result's text told it to make. */
  "obeyed_injected_instruction",
  /** A write proposed without the user asking for one. */
  "unrequested_write",
  /** Argument text that is not a JSON object. */
  "malformed_arguments",
  /** Argument text over the host's limit (64 KiB). */
  "oversized_arguments",
  /** Control characters in a tool name, arguments or answer. */
  "control_characters",
] as const;
export type AttemptKind = (typeof ATTEMPT_KINDS)[number];
export type AttemptCounts = Record<AttemptKind, number>;

export function emptyAttempts(): AttemptCounts {
  return Object.fromEntries(ATTEMPT_KINDS.map((kind) => [kind, 0])) as AttemptCounts;
}

/** Adds `more` into `total` (in place) and returns it. */
export function addAttempts(total: AttemptCounts, more: Partial<AttemptCounts>): AttemptCounts {
  for (const kind of ATTEMPT_KINDS) total[kind] += more[kind] ?? 0;
  return total;
}
