/**
 * The write-ahead step: "an effect's intent row and the checkpoint its run
 * resumes from are durable before the effect starts", in one place.
 *
 * `transact` takes the thread's held checkpoint saves from the checkpointer
 * (checkpointer.ts, through the typed `HeldSaves` contract: `exclusive`,
 * `takeHeld`, `restoreHeld`) and commits them with the intent row in ONE statement
 * (checkpoint-sql.ts `withSaves`: the saves as data-modifying CTEs in front
 * of the row's INSERT), so they commit or roll back as one, in one round
 * trip, before the caller goes on to start the effect. A read's outcome
 * (`defer`, from the ledger's `finishSoon`) is held here for the thread's
 * next statement: the next intent row folds it into its own statement when
 * it can, and anything else that writes the thread sends it first.
 *
 * Attached to the checkpointer as the writer of its held saves, so every
 * write of them keeps that order (held outcomes first, the first carrying
 * the saves). It also owns what that makes necessary:
 * - the idle sweep (idle-sweep.ts): what a thread holds (saves, outcomes) is
 *   written once nothing has been added to it for `idleFlushMs`, so a run
 *   stopped between steps does not leave it in this process's memory;
 * - failures nobody waited on: a held outcome that fails drops the saves
 *   that rode on it (the thread goes on from what is committed, as after a
 *   crash); when that happened in the background, the thread's next save,
 *   read or intent row fails with the error, once, instead.
 */
import type pg from "pg";
import type { HeldSaves, HeldSavesWriter } from "./checkpointer.js";
import type { Statement } from "./checkpoint-sql.js";
import { withSaves } from "./checkpoint-sql.js";
import { IDLE_FLUSH_MS, IdleSweep } from "./idle-sweep.js";
import { statement as queryConfig } from "../db/prepared.js";

/** A statement held back for the thread's next one (a read's outcome: `finishSoon`). */
export interface DeferredStatement {
  /** The statement, built when it is sent on its own. */
  statement(): Statement;
  /** Checks its result when it runs alone; throws to fail the operation that sent it. */
  check(result: pg.QueryResult): void;
  /** What it writes, for a caller that can fold it into its own statement (`MergedStatement`). */
  payload?: unknown;
}

/** A statement that also carries the deferred statements it was given. */
export interface MergedStatement {
  statement: Statement;
  /** Checks the deferred part of the result (throws as its `check` would) and returns the rows the caller's own part wrote. */
  read(result: pg.QueryResult): number;
}

/**
 * How a thread's ledger statements reach the database: the write-ahead unit
 * (`WriteAhead`); without one each statement runs alone on the pool, awaited.
 */
export interface ThreadStatements {
  /**
   * Runs an intent row's statement with the thread's held checkpoint saves
   * in front of it, so they commit as one. Deferred statements go first:
   * folded into it by `merge` when it can (one statement), else each on its
   * own before it. Returns the rows the intent statement wrote.
   */
  transact(
    threadId: string,
    intent: () => Statement,
    merge?: (deferred: readonly DeferredStatement[]) => MergedStatement | undefined,
  ): Promise<number>;
  /**
   * Holds a read's outcome update (`finishSoon`) for the thread's next
   * statement: its next intent row carries it, and any save, read or flush
   * of the thread sends it first. Nothing needs a read's outcome sooner:
   * until it commits the row reads `running`, which is what a crash right
   * after the call leaves, and recovery re-runs such a read; every later
   * effect of the thread starts only after its intent row, which carries it.
   */
  defer(threadId: string, deferred: DeferredStatement): void;
  /** Sends the thread's deferred statements (before a read of its rows); throws if one failed. */
  settle(threadId: string): Promise<void>;
}

export class WriteAhead implements ThreadStatements, HeldSavesWriter {
  /** Statements held back per thread (reads' outcomes), in order: `defer`. */
  private readonly deferred = new Map<string, DeferredStatement[]>();
  /** A background write's failure that dropped a thread's saves: the thread's next operation fails with it, once. */
  private readonly lost = new Map<string, unknown>();
  private readonly sweep: IdleSweep;
  private readonly named: boolean;

  constructor(private readonly saver: HeldSaves) {
    const { options } = saver;
    this.named = options.namedStatements ?? false;
    const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
    this.sweep = new IdleSweep(options.idleFlushMs ?? IDLE_FLUSH_MS, {
      holds: (threadId) => saver.holds(threadId) || this.deferred.has(threadId),
      write: (threadId) => saver.flush(threadId, { background: true }),
      failed: (threadId, error) =>
        log(
          `checkpointer: writing what thread ${threadId} held failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
    });
    saver.attach(this);
  }

  private get pool(): pg.Pool {
    return this.saver.pool;
  }

  /**
   * Commits the intent row `intent` gives with the thread's held checkpoint
   * saves in front of it: one statement, one round trip, committed or rolled
   * back as one. The thread's deferred statements are folded in by `merge`
   * when it takes them all, else sent before it. Runs after any write of the
   * thread already under way. Returns the rows the intent wrote.
   */
  async transact(
    threadId: string,
    intent: () => Statement,
    merge?: (deferred: readonly DeferredStatement[]) => MergedStatement | undefined,
  ): Promise<number> {
    return this.saver.exclusive(threadId, async () => {
      this.admit(threadId);
      const waiting = this.deferred.get(threadId);
      const merged = waiting && merge ? merge(waiting) : undefined;
      if (merged) this.deferred.delete(threadId);
      else await this.sendDeferred(threadId);
      const saves = this.saver.takeHeld(threadId);
      let result: pg.QueryResult;
      try {
        const combined = withSaves(merged ? merged.statement : intent(), saves);
        result = await this.pool.query(queryConfig(combined.text, combined.values, this.named));
      } catch (error) {
        this.saver.restoreHeld(threadId, saves);
        if (merged && waiting) this.deferred.set(threadId, [...waiting, ...(this.deferred.get(threadId) ?? [])]);
        throw error;
      }
      return merged ? merged.read(result) : (result.rowCount ?? 0);
    });
  }

  /**
   * Holds `deferred` (a call's outcome row: ledger-store.ts says why nothing
   * needs it sooner) for the thread's next statement. If it fails (or its
   * `check` throws), the operation that sent it fails with its error and the
   * thread's held saves are dropped: the thread then continues from what its
   * last committed statement saved, as after a crash.
   */
  defer(threadId: string, deferred: DeferredStatement): void {
    const queue = this.deferred.get(threadId);
    if (queue) queue.push(deferred);
    else this.deferred.set(threadId, [deferred]);
    this.sweep.touch(threadId);
  }

  /** Sends the thread's deferred statements; throws if one failed. */
  async settle(threadId: string): Promise<void> {
    await this.saver.exclusive(threadId, async () => {
      this.admit(threadId);
      await this.sendDeferred(threadId);
    });
  }

  /** Throws, once, the failure of a background write that dropped the thread's held saves. */
  admit(threadId: string): void {
    if (!this.lost.has(threadId)) return;
    const error = this.lost.get(threadId);
    this.lost.delete(threadId);
    throw error;
  }

  held(threadId: string): void {
    this.sweep.touch(threadId);
  }

  /** The thread's deferred statements, the first carrying its held saves; then any saves left, alone. */
  async write(threadId: string, background: boolean): Promise<void> {
    if (!background) this.admit(threadId);
    await this.sendDeferred(threadId, background);
    await this.saver.writeHeld(threadId);
  }

  /** Ledger rows outlive the thread's checkpoints: a read's deferred outcome is still written. */
  async deleting(threadId: string): Promise<void> {
    this.lost.delete(threadId);
    await this.sendDeferred(threadId);
  }

  threads(): Iterable<string> {
    return this.deferred.keys();
  }

  /** Stops the idle sweep for good (the checkpointer's close writes everything next). */
  close(): void {
    this.sweep.stop();
  }

  /**
   * The thread's deferred statements, in order, the first carrying its held
   * saves. Call under the thread's lock. A failure drops the held saves and
   * is thrown; `keepLoss` also keeps it for the thread's next operation
   * (nobody waits on a sweep), so a run never goes on from saves whose
   * parents were dropped.
   */
  private async sendDeferred(threadId: string, keepLoss = false): Promise<void> {
    const queue = this.deferred.get(threadId);
    if (!queue) return;
    this.deferred.delete(threadId);
    let saves = this.saver.takeHeld(threadId);
    try {
      for (const entry of queue) {
        const statement = withSaves(entry.statement(), saves);
        saves = { checkpoints: [], writes: [] };
        entry.check(await this.pool.query(queryConfig(statement.text, statement.values, this.named)));
      }
    } catch (error) {
      // As after a crash: what is not committed is gone, and the thread goes on from what is.
      this.saver.dropHeld(threadId);
      if (keepLoss) this.lost.set(threadId, error);
      throw error;
    }
  }
}

/** The saver's write-ahead unit: the one attached to it, else a new one (attached). */
export function writeAheadOf(saver: HeldSaves): WriteAhead {
  const attached = saver.attached();
  if (attached instanceof WriteAhead) return attached;
  return new WriteAhead(saver);
}
