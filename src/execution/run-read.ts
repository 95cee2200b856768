/** Running a read: bounded retries of transient failures with backoff (DESIGN §6), each attempt its own ledger row. */
import type { CatalogTool } from "../policy/contracts.js";
import { type AttemptResult, done, failed, withRetries } from "../retry.js";
import type { Allowed, CallJournal } from "./call-journal.js";
import { failure, notStarted, type Settled, settled, success } from "./call-outcome.js";
import { type FailureReason, RETRY_POLICIES } from "./retry-policies.js";

/** Reads: bounded retries of transient failures with backoff (DESIGN §6). */
export function runRead(action: Allowed, tool: CatalogTool, journal: CallJournal): Promise<Settled> {
  return withRetries(
    RETRY_POLICIES.read(tool.contract.max_attempts),
    async (): Promise<AttemptResult<Settled, FailureReason>> => {
      const started = await journal.attempt(tool, action.args, {
        risk: action.risk,
        fingerprint: action.fingerprint,
        idempotency_key: null,
      });
      if (started.kind !== "ran") return done(notStarted(action, started));
      const { outcome } = started;
      if (outcome.ok) return done(settled(success(action, outcome.text, outcome.structured)));
      return failed(outcome.code, settled(failure(action, outcome.code, outcome.message)));
    },
  );
}
