/**
 * The scheduler loop, one per server instance: every `intervalMs` it reads
 * the crons that are due, moves each past its occurrence (the claim: only one
 * instance wins it) and fires the ones it won. The next occurrence is the
 * first one after *now*, so occurrences missed while every instance was down
 * collapse into one run.
 */
import type { CronRow, CronStore } from "../../stores/cron-store.js";
import { fireCron, type CronFiringContext } from "./cron-fire.js";
import { nextOccurrence } from "./schedule.js";

export interface SchedulerOptions {
  crons: CronStore;
  firing: CronFiringContext;
  intervalMs: number;
  /** Tests only (`WARRANT_TEST_CRON_CLAIM_DELAY_MS`): a pause between reading a due cron and claiming it. */
  claimDelayMs?: number | undefined;
  log: (line: string) => void;
}

export interface Scheduler {
  /** Stops the loop and waits for the tick in progress. */
  stop(): Promise<void>;
}

/** Crons read per tick. */
const BATCH = 20;

export function startScheduler(options: SchedulerOptions): Scheduler {
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  const tick = async () => {
    const due = await options.crons.due(BATCH);
    if (options.claimDelayMs && due.length > 0)
      await new Promise((resolve) => setTimeout(resolve, options.claimDelayMs));
    for (const cron of due) {
      if (stopped) return;
      await fireOccurrence(options, cron);
    }
  };
  const timer = setInterval(() => {
    // One tick at a time: a slow database makes ticks wait, never pile up.
    current = current.then(() =>
      stopped ? undefined : tick().catch((error: unknown) => options.log(`cron tick failed: ${String(error)}`)),
    );
  }, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}

async function fireOccurrence(options: SchedulerOptions, cron: CronRow): Promise<void> {
  if (!cron.next_run_at) return;
  const next = nextOccurrence(cron.schedule, cron.timezone, new Date(), cron.end_time) ?? null;
  const occurrence = cron.next_run_at.toISOString();
  if (!(await options.crons.claim(cron.cron_id, cron.next_run_at, next))) {
    options.log(`cron ${cron.cron_id}: occurrence ${occurrence} was claimed by another instance`);
    return;
  }
  const result = await fireCron(options.firing, cron);
  if (result.type === "started") {
    options.log(`cron ${cron.cron_id}: occurrence ${occurrence} claimed; started run ${result.run_id}`);
    await options.crons.recordFiring(cron.cron_id, { run_id: result.run_id });
  } else {
    options.log(`cron ${cron.cron_id}: occurrence ${occurrence} claimed; skipped (${result.error}: ${result.message})`);
    await options.crons.recordFiring(cron.cron_id, { error: { error: result.error, message: result.message } });
  }
}
