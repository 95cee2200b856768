/**
 * The write-ahead unit's idle sweep (write-ahead.ts): a thread that holds saves
 * or a held-back outcome, and to which nothing has been added for `idleMs`,
 * has them written, so a run stopped between steps (cancelled, its client
 * gone) does not leave them in this process's memory until someone next
 * touches the thread. One interval timer, running only while something is
 * held, never keeping the process alive.
 */

/** How long a thread may hold saves or a held-back outcome with nothing added before a sweep writes them. */
export const IDLE_FLUSH_MS = 2_000;

export interface IdleSweepHooks {
  /** Whether the thread still holds anything. */
  holds(threadId: string): boolean;
  /** Writes what the thread holds. */
  write(threadId: string): Promise<void>;
  /** Reports a write that failed. */
  failed(threadId: string, error: unknown): void;
}

export class IdleSweep {
  /** When something was last added to each thread that holds something (ms since the epoch). */
  private readonly touched = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly idleMs: number,
    private readonly hooks: IdleSweepHooks,
  ) {}

  /** Notes that the thread holds something new; starts the timer if it is not running. */
  touch(threadId: string): void {
    if (this.stopped) return;
    this.touched.set(threadId, Date.now());
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep(), this.idleMs);
    this.timer.unref();
  }

  /** For good: the database is closing, and its close writes everything. */
  stop(): void {
    this.stopped = true;
    this.clear();
  }

  private async sweep(): Promise<void> {
    const idleSince = Date.now() - this.idleMs;
    for (const [threadId, at] of this.touched) {
      if (at > idleSince) continue;
      this.touched.delete(threadId);
      if (!this.hooks.holds(threadId)) continue;
      await this.hooks.write(threadId).catch((error: unknown) => {
        this.hooks.failed(threadId, error);
        // What a failed statement did not commit is held again: the next sweep tries again.
        if (this.hooks.holds(threadId)) this.touch(threadId);
      });
    }
    if (this.touched.size === 0 || this.stopped) this.clear();
  }

  private clear(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.touched.clear();
  }
}
