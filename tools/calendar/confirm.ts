/**
 * `create_study_event`'s confirmation step (`WARRANT_CALENDAR_CONFIRM=1`): before it writes, the server asks the
 * user to confirm the event, in whichever way the client's revision has for it. On 2025-11-25 that is an
 * `elicitation/create` request to the client during the call; on 2026-07-28 the call answers
 * `resultType: "input_required"` and the client re-sends it with the answer in `inputResponses` (under a new
 * request id, with the same arguments: the same idempotency key). Nothing is written before the answer.
 *
 * `WARRANT_CALENDAR_CALL_LOG=PATH` appends one JSON line per `create_study_event` request the server receives
 * (its idempotency key, whether it carried `inputResponses`), so tests can count what reached the server.
 */
import { appendFileSync } from "node:fs";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { inputRequired, inputResponse } from "@modelcontextprotocol/server";

export const CONFIRM_ENV = "WARRANT_CALENDAR_CONFIRM";
export const CALL_LOG_ENV = "WARRANT_CALENDAR_CALL_LOG";

/** The key of the confirmation among a 2026-07-28 call's `inputRequests` / `inputResponses`. */
const CONFIRM_KEY = "confirm";
const CONFIRM_SCHEMA = {
  type: "object" as const,
  properties: { confirm: { type: "boolean" as const, title: "Create this event", default: true } },
  required: ["confirm"],
};
/** How long a 2025-11-25 elicitation may wait for the user (the host bounds it with its own timeout). */
const ELICITATION_TIMEOUT_MS = 600_000;

/** What the confirmation step decided: write, do not write (and why), or ask first (the handler's answer). */
export type Confirmation =
  | { kind: "confirmed" }
  | { kind: "refused"; action: string }
  | { kind: "ask"; result: ReturnType<typeof inputRequired> };

/** The server's settings for the step, read once at start-up. */
export interface ConfirmSettings {
  readonly confirm: boolean;
  readonly callLog: string | undefined;
}

export function confirmSettings(environment: NodeJS.ProcessEnv): ConfirmSettings {
  const confirm = environment[CONFIRM_ENV]?.trim() ?? "";
  if (confirm !== "" && confirm !== "0" && confirm !== "1")
    throw new Error(`invalid ${CONFIRM_ENV}=${JSON.stringify(confirm)} (expected 0 or 1)`);
  const callLog = environment[CALL_LOG_ENV]?.trim();
  return { confirm: confirm === "1", callLog: callLog === undefined || callLog === "" ? undefined : callLog };
}

/** The `inputResponses` of a 2026-07-28 request as the v2 SDK hands them to a handler (`ctx.mcpReq`). */
export function inputResponsesOf(extra: unknown): unknown {
  if (typeof extra !== "object" || extra === null) return undefined;
  const request = (extra as { mcpReq?: unknown }).mcpReq;
  return typeof request === "object" && request !== null
    ? (request as { inputResponses?: unknown }).inputResponses
    : undefined;
}

/** Appends the request to the call log (synchronously: a switch may end the process right after). */
export function logCall(settings: ConfirmSettings, idempotencyKey: string, extra: unknown): void {
  if (settings.callLog === undefined) return;
  const line = { idempotency_key: idempotencyKey, input_responses: inputResponsesOf(extra) !== undefined };
  appendFileSync(settings.callLog, `${JSON.stringify(line)}\n`);
}

/** The answer to an elicitation (either revision) as a decision: only an accepted `confirm: true` writes. */
function decided(action: string, content: unknown): Confirmation {
  const confirmed =
    action === "accept" && typeof content === "object" && content !== null && Reflect.get(content, "confirm") === true;
  return confirmed
    ? { kind: "confirmed" }
    : { kind: "refused", action: action === "accept" ? "not confirmed" : action };
}

type InputRequests = Parameters<typeof inputRequired>[0]["inputRequests"];

const confirmMessage = (title: string): string => `Create the study event "${title.slice(0, 200)}" in your calendar?`;

/** The 2026-07-28 `inputRequests` that ask to confirm an event titled `title` (a plain call's or a task's). */
export function confirmRequests(title: string): InputRequests {
  return { [CONFIRM_KEY]: inputRequired.elicit({ message: confirmMessage(title), requestedSchema: CONFIRM_SCHEMA }) };
}

/** The decision carried by 2026-07-28 `inputResponses` (a re-sent call's or a `tasks/update`'s); undefined: none. */
export function confirmationIn(responses: unknown): Confirmation | undefined {
  const view = inputResponse(responses as Parameters<typeof inputResponse>[0], CONFIRM_KEY);
  if (view.kind === "missing") return undefined;
  return view.kind === "elicit" ? decided(view.action, view.content) : { kind: "refused", action: "unreadable" };
}

/** Asks (or reads the answer to) the confirmation of an event titled `title`; `sdk` says which revision asks. */
export async function confirmCreate(
  settings: ConfirmSettings,
  sdk: "v1" | "v2",
  extra: unknown,
  title: string,
): Promise<Confirmation> {
  if (!settings.confirm) return { kind: "confirmed" };
  if (sdk === "v2") {
    const answered = confirmationIn(inputResponsesOf(extra));
    return answered ?? { kind: "ask", result: inputRequired({ inputRequests: confirmRequests(title) }) };
  }
  const { sendRequest } = extra as {
    sendRequest: (request: unknown, schema: typeof ElicitResultSchema, options: object) => Promise<unknown>;
  };
  try {
    const answer = ElicitResultSchema.parse(
      await sendRequest(
        { method: "elicitation/create", params: { message: confirmMessage(title), requestedSchema: CONFIRM_SCHEMA } },
        ElicitResultSchema,
        { timeout: ELICITATION_TIMEOUT_MS },
      ),
    );
    return decided(answer.action, answer.content);
  } catch {
    // A client that cannot elicit cannot confirm: nothing is written.
    return { kind: "refused", action: "no elicitation" };
  }
}
