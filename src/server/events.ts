/**
 * A run's event log in the process that executes it: every SSE event the run
 * produced, numbered, kept in memory while the run executes and for a while
 * after, so a client of this process can stream it live, join it late, or
 * reconnect with `Last-Event-ID` and miss nothing, without a database round
 * trip. The same events go to Postgres for the other instances
 * (`runs/event-writer.ts`). The run itself never waits for a reader: a client
 * that goes away costs the run nothing.
 */
import { toClientJson } from "./client-view.js";

export interface RunEvent {
  /** The SSE id: numbered from 0 per run, the same on every instance. */
  id: number;
  event: string;
  /** The event's data as wire JSON (`toWireJson`), serialized once. */
  json: string;
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

  /** Whether every event after `afterId` is still here (the oldest are dropped past MAX_EVENTS). */
  holds(afterId: number | undefined): boolean {
    const oldest = this.#events[0]?.id ?? this.#next;
    return (afterId ?? -1) + 1 >= oldest;
  }

  /** Appends an event (`json`: its data's wire JSON when the caller has it already); undefined once closed. */
  push(event: string, data: unknown, json?: string): RunEvent | undefined {
    if (this.#done) return undefined;
    const pushed = { id: this.#next++, event, json: json ?? toWireJson(data) ?? "null" };
    this.#events.push(pushed);
    if (this.#events.length > MAX_EVENTS) this.#events.shift();
    this.#notify();
    return pushed;
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
 * JSON for the wire: what a client may see of the value (`client-view.ts`:
 * no host-owned configurable key, a principal by identity only, checkpoints in
 * the LangGraph API's shape), LangChain messages as the plain dicts the SDK
 * expects, errors as `{ error, message }` without stacks.
 */
export function toWireJson(value: unknown): string {
  return toClientJson(value);
}

/** Parses `toWireJson` output back into plain data (for responses built from it). */
export function toWire<T = unknown>(value: unknown): T {
  return JSON.parse(toWireJson(value) ?? "null") as T;
}

/**
 * Whether an event belongs to the stream modes a join asked for (`stream_mode`
 * on `GET …/runs/{id}/stream`; none means all). `metadata` and `error` always
 * do; `messages` events are the `messages-tuple` mode, `messages/*` the
 * `messages` mode.
 */
export function eventInModes(event: string, modes: readonly string[] | undefined): boolean {
  if (!modes || modes.length === 0 || event === "metadata" || event === "error") return true;
  if (event === "messages") return modes.includes("messages-tuple");
  if (event.startsWith("messages/")) return modes.includes("messages");
  return modes.includes(event);
}
