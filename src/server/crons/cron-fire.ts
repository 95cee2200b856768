/**
 * Fires one occurrence of a cron: a run like any other, started through the
 * run manager (`RunManager.start`, the one place a run is admitted), so it
 * runs under the same budgets, policy and review rules, and counts against
 * its owner's run limit. It runs as its owner as the principal directory
 * lists them at firing time: an owner the directory no longer lists has the
 * occurrence skipped (`principal_revoked`), never run on a stale identity.
 *
 * A stateless cron gets a new thread each time; with `on_run_completed:
 * "delete"` that thread goes once its run succeeded, unless the run is waiting
 * for a review (the review would be lost with it).
 */
import { randomUUID } from "node:crypto";
import type { StateSnapshot } from "@langchain/langgraph";
import type { PrincipalDirectory } from "../../auth/principal-directory.js";
import type { ThreadStore } from "../../stores/thread-store.js";
import type { LedgerStore } from "../../ports.js";
import type { Owner, ThreadRow } from "../../stores/thread-rows.js";
import { clientMetadata } from "../request-fields.js";
import type { CronRow } from "../../stores/cron-store.js";
import { assertRunnable } from "../runs/checks.js";
import { RunInput, requestText, toGraphInput } from "../runs/requests.js";
import type { RunManager } from "../runs/manager.js";
import { isApiError } from "../../errors.js";

export interface CronFiringContext {
  manager: RunManager;
  threads: ThreadStore;
  ledger: LedgerStore;
  directory: PrincipalDirectory;
  snapshotOf(threadId: string): Promise<StateSnapshot>;
  deleteCheckpoints(threadId: string): Promise<void>;
  /** Registers a run's webhook before the run starts (webhooks/registry.ts). */
  registerWebhook?: ((owner: Owner, threadId: string, runId: string, url: string) => Promise<void>) | undefined;
  log: (line: string) => void;
}

export type FiringResult = { type: "started"; run_id: string } | { type: "skipped"; error: string; message: string };

export async function fireCron(context: CronFiringContext, cron: CronRow): Promise<FiringResult> {
  const owner: Owner = { tenant: cron.tenant, user_id: cron.owner };
  let principal: Awaited<ReturnType<PrincipalDirectory["current"]>>;
  try {
    principal = await context.directory.current(cron.principal);
  } catch (error) {
    return skipped(error, "principal_revoked");
  }
  const parsed = RunInput.safeParse(cron.payload.input);
  if (!parsed.success) return { type: "skipped", error: "invalid_request", message: "the cron's input is not valid" };
  let created: ThreadRow | undefined;
  try {
    const input = toGraphInput(parsed.data);
    if (!cron.thread_id)
      created = await context.threads.create(owner, {
        thread_id: randomUUID(),
        metadata: { cron_id: cron.cron_id },
        graph_id: cron.assistant_id,
      });
    const thread = cron.thread_id ? await context.threads.get(owner, cron.thread_id) : created;
    if (!thread) return { type: "skipped", error: "not_found", message: "the cron's thread no longer exists" };
    const runnable = async () => {
      const snapshot = await context.snapshotOf(thread.thread_id);
      const ledger = snapshot.next.length > 0 ? await context.ledger.list(thread.thread_id) : [];
      assertRunnable(snapshot, { kind: "input", placeholders: [] }, ledger);
    };
    await runnable();
    const runId = randomUUID();
    if (cron.payload.webhook) await context.registerWebhook?.(owner, thread.thread_id, runId, cron.payload.webhook);
    const active = await context.manager.start({
      principal,
      thread,
      assistantId: cron.assistant_id,
      input,
      streamModes: ["values"],
      // A cron stored before the metadata rule may still hold the server's keys: dropped again here.
      metadata: { ...clientMetadata(cron.payload.metadata), cron_id: cron.cron_id },
      runId,
      verify: runnable,
      runBound: context.manager.runBoundFor(requestText(parsed.data)),
    });
    if (created && cron.on_run_completed === "delete") void deleteWhenDone(context, owner, active.run, active.settled);
    return { type: "started", run_id: active.run.run_id };
  } catch (error) {
    // A new thread whose run never started is not kept.
    if (created) await context.threads.delete(owner, created.thread_id).catch(() => undefined);
    return skipped(error, "internal_error");
  }
}

/** The stateless cron's thread goes once its run succeeded and no review waits on it. */
async function deleteWhenDone(
  context: CronFiringContext,
  owner: Owner,
  run: { run_id: string; thread_id: string; assistant_id: string },
  settled: Promise<void>,
): Promise<void> {
  try {
    await settled;
    const ended = await context.threads.getRun(owner, run.thread_id, run.run_id);
    if (ended?.status !== "success") return;
    if ((await context.manager.threadStatus(run.assistant_id, run.thread_id)) === "interrupted") return;
    await context.threads.delete(owner, run.thread_id);
    await context.deleteCheckpoints(run.thread_id);
  } catch (error) {
    context.log(`could not delete the thread of cron run ${run.run_id}: ${String(error)}`);
  }
}

function skipped(error: unknown, fallback: string): FiringResult {
  const code = isApiError(error)
    ? error.code
    : typeof (error as { code?: unknown } | null)?.code === "string"
      ? String((error as { code: string }).code)
      : fallback;
  const message = (error instanceof Error ? error.message : String(error)).split("\n", 1)[0]?.slice(0, 300) ?? "";
  return { type: "skipped", error: code, message };
}
