/**
 * The one formatter of refusals: what the model reads for a call that did not
 * run, whether a check denied it or the tool failed. A denial keeps the name
 * of the check that refused it, so the model (and anyone reading the
 * transcript) sees why.
 */
import type { ToolErrorCode } from "../errors.js";
import type { Denial } from "./decision.js";

/** The fields of a tool message (`ToolMessage`) that answers a call with an error. */
export interface ErrorToolMessage {
  tool_call_id: string;
  name: string;
  status: "error";
  content: string;
}

/** A failed call's answer: `{"error": {"code", "message", …}}`. */
export function errorToolMessage(
  call: { call_id: string; tool: string },
  error: { code: ToolErrorCode; message: string } & Partial<Pick<Denial, "check" | "withheld" | "budget">>,
): ErrorToolMessage {
  const { code, message, check, withheld, budget } = error;
  const body = {
    code,
    message,
    ...(check !== undefined ? { check } : {}),
    ...(withheld !== undefined ? { withheld } : {}),
    ...(budget !== undefined ? { budget } : {}),
  };
  return { tool_call_id: call.call_id, name: call.tool, status: "error", content: JSON.stringify({ error: body }) };
}

/** A denied call's answer: its code, message and the check that refused it. */
export function deniedToolMessage(denial: Denial): ErrorToolMessage {
  return errorToolMessage(denial, denial);
}
