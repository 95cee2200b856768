/**
 * The `Idempotency-Key` header of run creation. A key names one run per
 * principal: sent again with the same request, the route answers with that
 * run (its row, its result, its stream) and starts nothing; sent with another
 * request, it is refused (422 `idempotency_key_reused`).
 */
import type { Context } from "hono";
import type { ThreadStore } from "../../stores/thread-store.js";
import type { Owner, RunRow } from "../../stores/thread-rows.js";
import { isRunKey, requestHash, type RunKeyRow } from "../../stores/run-keys.js";
import type { Env } from "../context.js";
import { ApiError } from "../../errors.js";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";

/** How long a repeat waits for the run of a concurrent first request to be recorded. */
const CLAIM_WAIT_MS = 5_000;

/** The request's key, validated; undefined when the header is absent. */
export function idempotencyKeyOf(c: Context<Env>): string | undefined {
  const key = c.req.header(IDEMPOTENCY_HEADER);
  if (key === undefined) return undefined;
  if (!isRunKey(key))
    throw new ApiError(
      "invalid_request",
      `${IDEMPOTENCY_HEADER} must be 1–255 printable ASCII characters, without leading or trailing spaces`,
    );
  return key;
}

/** What a repeat is compared by: where the run goes (a thread, or a new stateless one) and the whole body. */
export function runRequestHash(target: string, body: unknown): string {
  return requestHash({ target, body });
}

/**
 * The run a key already started, for a repeat with the same request hash.
 * Waits briefly when the first request has claimed the key but not yet
 * recorded its run (the two arrived together).
 */
export async function replayedRun(
  store: ThreadStore,
  owner: Owner,
  key: string,
  recorded: RunKeyRow,
  hash: string,
): Promise<RunRow> {
  if (recorded.request_hash !== hash) {
    throw new ApiError(
      "idempotency_key_reused",
      `${IDEMPOTENCY_HEADER} was already used for a different request; use a new key`,
    );
  }
  const deadline = Date.now() + CLAIM_WAIT_MS;
  for (;;) {
    const run = await store.getRun(owner, recorded.thread_id, recorded.run_id);
    if (run) return run;
    // Long recorded and still no run: it was deleted with its thread.
    if (Date.now() - recorded.created_at.getTime() > CLAIM_WAIT_MS) {
      throw new ApiError(
        "not_found",
        `the run started with this ${IDEMPOTENCY_HEADER} no longer exists (its thread was deleted)`,
      );
    }
    const still = await store.runKeys.find(owner, key);
    if (!still || still.run_id !== recorded.run_id || Date.now() > deadline) {
      throw new ApiError(
        "idempotency_key_in_use",
        `a request with this ${IDEMPOTENCY_HEADER} is being started or has just failed; retry`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
