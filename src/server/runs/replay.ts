/**
 * Replaying an idempotent run request (`Idempotency-Key`): a key this
 * principal already used answers with the run it started
 * (`Idempotent-Replayed: true`), before any check, since the first request's
 * run may well have consumed the interrupt it resumed. A new key is claimed
 * once every check has passed, so of two requests with one key one starts
 * and the other replays it; a run that then fails to start gives it back.
 */
import type { Context } from "hono";
import type { RunKeyRow } from "../../stores/run-keys.js";
import type { ThreadRow } from "../../stores/thread-rows.js";
import type { Env, RouteContext } from "../context.js";
import { idempotencyKeyOf, replayedRun, runRequestHash } from "./idempotency.js";
import { parseBody } from "../request-fields.js";
import { RunCreate } from "./requests.js";
import { ownerOf } from "./types.js";
import type { RunClaim, StartedRun } from "./start.js";

/** What an idempotent start resolves to: the run, and whether the request carried a key. */
export interface KeyedStart {
  started: StartedRun;
  keyed: boolean;
}

/**
 * Runs `start` under the request's `Idempotency-Key`, if any: returns the
 * recorded run for a repeat, else starts with a claim on the key.
 */
export async function startIdempotent(
  c: Context<Env>,
  context: RouteContext,
  thread: ThreadRow | "stateless",
  raw: unknown,
  start: (claim: RunClaim | undefined) => Promise<StartedRun>,
): Promise<KeyedStart> {
  const key = idempotencyKeyOf(c);
  if (key === undefined) return { started: await start(undefined), keyed: false };
  const { store } = context;
  const owner = ownerOf(context.principalOf(c));
  const hash = runRequestHash(thread === "stateless" ? "stateless" : thread.thread_id, raw);
  const replay = async (recorded: RunKeyRow): Promise<StartedRun> => {
    c.header("Idempotent-Replayed", "true");
    return { run: await replayedRun(store, owner, key, recorded, hash), request: parseBody(RunCreate, raw) };
  };
  const recorded = await store.runKeys.find(owner, key);
  if (recorded) return { started: await replay(recorded), keyed: true };
  const claim: RunClaim = {
    async take(threadId, runId) {
      const claimed = await store.runKeys.claim(owner, key, { request_hash: hash, thread_id: threadId, run_id: runId });
      return claimed.claimed ? undefined : replay(claimed.existing);
    },
    release: (runId) => store.runKeys.release(owner, key, runId),
  };
  return { started: await start(claim), keyed: true };
}
