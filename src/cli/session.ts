/**
 * What the CLI keeps in Postgres beside the checkpoints, with the API's
 * rules: the owner of every thread it creates (`warrant.threads`), so one
 * user can never continue or read another's thread (a foreign and an unknown
 * thread look the same), and run idempotency keys (`warrant.run_idempotency`),
 * so a command repeated with one key starts nothing new.
 */
import { randomUUID } from "node:crypto";
import type { Principal } from "../auth/principal.js";
import { CliError } from "../errors.js";
import { requestHash, type RunKeyRow } from "../stores/run-keys.js";
import type { ThreadStore } from "../stores/thread-store.js";
import type { Owner } from "../stores/thread-rows.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const ownerOf = (principal: Principal): Owner => ({ tenant: principal.tenant, user_id: principal.user_id });

/** What a run of the CLI asks for: compared when a key is used again. */
export interface CliRequest {
  thread: string | undefined;
  request: string;
  resume: unknown;
  caseId: string | undefined;
}

export type Session =
  /** Start a run on this thread (created for the owner when new). */
  | { kind: "run"; threadId: string; runId: string; created: boolean }
  /** The key already started a run: show it, start nothing. */
  | { kind: "replay"; recorded: RunKeyRow };

/**
 * The thread an invocation works on, checked against its owner, and (with a
 * key) claimed for this run or found already used. Throws `thread_not_found`
 * for another user's thread, an unknown one or an id that cannot be one, and
 * `idempotency_key_reused` when the key was used for another command.
 */
export async function openSession(
  store: ThreadStore,
  principal: Principal,
  request: CliRequest,
  key: string | undefined,
): Promise<Session> {
  const owner = ownerOf(principal);
  const hash = requestHash({
    cli: true,
    ...request,
    resume: request.resume ?? null,
    thread: request.thread ?? null,
    caseId: request.caseId ?? null,
  });
  if (key !== undefined) {
    const recorded = await store.runKeys.find(owner, key);
    if (recorded) return replayOf(recorded, hash);
  }
  if (request.thread !== undefined) {
    // Not a uuid → it cannot exist (and Postgres would refuse the comparison).
    if (!UUID.test(request.thread) || !(await store.get(owner, request.thread.toLowerCase()))) {
      throw new CliError("thread_not_found", `thread ${request.thread} not found for ${principal.user_id}`);
    }
  }
  const threadId = request.thread?.toLowerCase() ?? randomUUID();
  const runId = randomUUID();
  if (key !== undefined) {
    const claim = await store.runKeys.claim(owner, key, { request_hash: hash, thread_id: threadId, run_id: runId });
    if (!claim.claimed) return replayOf(claim.existing, hash);
  }
  if (request.thread === undefined) {
    const created = await store.create(owner, { thread_id: threadId, metadata: {}, graph_id: "agent" });
    if (!created) throw new CliError("thread_not_found", `thread ${threadId} could not be created`);
  }
  return { kind: "run", threadId, runId, created: request.thread === undefined };
}

function replayOf(recorded: RunKeyRow, hash: string): Session {
  if (recorded.request_hash !== hash)
    throw new CliError(
      "idempotency_key_reused",
      "this --idempotency-key was already used for a different command; use a new key",
    );
  return { kind: "replay", recorded };
}
