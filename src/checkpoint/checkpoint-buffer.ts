/**
 * Checkpoint saves not yet written, per thread, and the per-thread lock under
 * which they are written. Taking a thread's saves and writing them happen
 * under that lock, so whoever holds it after a flush knows every save taken
 * before is committed (or back in the buffer, if its transaction failed).
 */
import type { CheckpointSave, PendingSaves, WritesSave } from "./checkpoint-sql.js";

const isEmpty = (saves: PendingSaves) => saves.checkpoints.length === 0 && saves.writes.length === 0;

export class CheckpointBuffer {
  private readonly pending = new Map<string, PendingSaves>();
  private readonly locks = new Map<string, Promise<unknown>>();

  add(threadId: string, save: { checkpoint: CheckpointSave } | { writes: WritesSave }): void {
    const saves = this.pending.get(threadId) ?? { checkpoints: [], writes: [] };
    if ("checkpoint" in save) saves.checkpoints.push(save.checkpoint);
    else saves.writes.push(save.writes);
    this.pending.set(threadId, saves);
  }

  /** Removes and returns a thread's saves (empty when there are none). Call under the thread's lock. */
  take(threadId: string): PendingSaves {
    const saves = this.pending.get(threadId) ?? { checkpoints: [], writes: [] };
    this.pending.delete(threadId);
    return saves;
  }

  /** Puts saves whose transaction failed back in front of any added since. */
  restore(threadId: string, saves: PendingSaves): void {
    if (isEmpty(saves)) return;
    const later = this.take(threadId);
    this.pending.set(threadId, {
      checkpoints: [...saves.checkpoints, ...later.checkpoints],
      writes: [...saves.writes, ...later.writes],
    });
  }

  /** Drops a thread's saves (the thread is being deleted). Call under the thread's lock. */
  discard(threadId: string): void {
    this.pending.delete(threadId);
  }

  /** Whether the thread has saves not yet written. */
  has(threadId: string): boolean {
    return this.pending.has(threadId);
  }

  threads(): string[] {
    return [...this.pending.keys()];
  }

  /** Threads whose lock is held or waited for. */
  busyThreads(): string[] {
    return [...this.locks.keys()];
  }

  /** Runs `work` alone for this thread: after every earlier holder, before every later one. */
  async exclusive<T>(threadId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(threadId) ?? Promise.resolve();
    const current = previous.then(work, work);
    const settled = current.catch(() => undefined);
    this.locks.set(threadId, settled);
    try {
      return await current;
    } finally {
      // The last holder clears the entry, so finished threads leave nothing behind.
      if (this.locks.get(threadId) === settled) this.locks.delete(threadId);
    }
  }
}
