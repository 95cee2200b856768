/**
 * A run's event log: every SSE event a run produced, numbered, kept in
 * memory while the run executes and for a while after, so a client can
 * stream it live, join it late, or reconnect with `Last-Event-ID` and miss
 * nothing. The run itself never waits for a reader: a client that goes away
 * costs the run nothing.
 */

export interface RunEvent {
  id: number;
  event: string;
  data: unknown;
}

/** Most events kept per run; older ones are dropped (a reader that far behind re-reads state instead). */
const MAX_EVENTS = 20_000;

export class EventLog {
  readonly #events: RunEvent[] = [];
  #next = 0;
  #done = false;
  #wake: (() => void)[] = [];

  get done(): boolean {
    return this.#done;
  }

  push(event: string, data: unknown): void {
    if (this.#done) return;
    this.#events.push({ id: this.#next++, event, data });
    if (this.#events.length > MAX_EVENTS) this.#events.shift();
    this.#notify();
  }

  close(): void {
    this.#done = true;
    this.#notify();
  }

  /** Resolves when the log is closed. */
  async finished(): Promise<void> {
    while (!this.#done) await new Promise<void>((resolve) => this.#wake.push(resolve));
  }

  /**
   * Yields events after `afterId` (all when undefined) until the log closes
   * or `signal` aborts.
   */
  async *read(afterId: number | undefined, signal?: AbortSignal): AsyncGenerator<RunEvent> {
    let cursor = afterId === undefined ? -1 : afterId;
    while (!signal?.aborted) {
      const pending = this.#events.filter((event) => event.id > cursor);
      for (const event of pending) {
        cursor = event.id;
        yield event;
      }
      if (this.#done && this.#events.every((event) => event.id <= cursor)) return;
      if (pending.length === 0) {
        await new Promise<void>((resolve) => {
          this.#wake.push(resolve);
          signal?.addEventListener("abort", () => resolve(), { once: true });
        });
      }
    }
  }

  #notify(): void {
    const waiting = this.#wake;
    this.#wake = [];
    for (const resolve of waiting) resolve();
  }
}

/**
 * JSON for the wire. LangChain messages become the plain dicts the SDK
 * expects (`{ type: "human", content, id, … }`), errors become
 * `{ error, message }` without stacks.
 */
export function toWireJson(value: unknown): string {
  return JSON.stringify(value, function replacer(this: Record<string, unknown>, key: string, current: unknown) {
    const raw = this[key];
    if (raw !== null && typeof raw === "object" && typeof (raw as { toDict?: unknown }).toDict === "function") {
      const { type, data } = (raw as { toDict(): { type: string; data: Record<string, unknown> } }).toDict();
      return { ...data, type };
    }
    if (raw instanceof Error) return { error: raw.name, message: raw.message };
    return current;
  });
}

/** Parses `toWireJson` output back into plain data (for responses built from it). */
export function toWire<T = unknown>(value: unknown): T {
  return JSON.parse(toWireJson(value) ?? "null") as T;
}
