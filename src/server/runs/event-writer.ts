/**
 * Writes a run's events to Postgres behind the in-memory log: the executing
 * process's own readers are served from memory at once, and the rows follow
 * in order, batched (while one insert is in flight, the next events queue and
 * go together in the next one), so a run producing hundreds of token events a
 * second costs a few statements, not one per token. The run never waits for
 * a write, except at its end (`close`), so that every event is in the table
 * before the run's row says it ended.
 *
 * `values` snapshots, `messages/partial` messages, and the state that
 * `checkpoints`, `tasks` and `debug` events repeat, are stored as deltas
 * against the previous event of their chain (`event-delta.ts`) when that is
 * smaller: a run's transcript is stored once, not once per step.
 */
import { END_EVENT, type RunEventStore, type StoredEvent } from "../../stores/run-events-store.js";
import { diff } from "./event-delta.js";
import type { RunEvent } from "../events.js";

/** Most rows per insert. */
const MAX_BATCH = 500;
/** Pauses before retrying a failed insert; then the table part of the log is given up (the run goes on). */
const RETRY_DELAYS_MS = [100, 500, 2_000];

/** Events that repeat the state (or a message) of the one before them: stored against it. */
const CHAINED = new Set(["values", "messages/partial", "checkpoints", "tasks", "debug"]);

/** The delta chain of an event: what it is a newer version of (null: stored whole). */
export function chainOf(event: string, parsed: unknown): string | null {
  const record =
    parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  switch (event) {
    case "values":
    case "checkpoints":
      return event;
    case "messages/partial": {
      const id = Array.isArray(parsed) ? (parsed[0] as { id?: unknown } | null)?.id : undefined;
      return typeof id === "string" ? `partial:${id}` : null;
    }
    // A task's start carries the state it was given, its end its result: two shapes, two chains.
    case "tasks":
      return record ? `tasks:${Object.hasOwn(record, "input") ? "start" : "result"}` : null;
    case "debug":
      return typeof record?.["type"] === "string" ? `debug:${record["type"]}` : null;
    default:
      return null;
  }
}

export class RunEventWriter {
  readonly #store: RunEventStore;
  readonly #runId: string;
  readonly #log: (line: string) => void;
  readonly #chains = new Map<string, unknown>();
  #queue: StoredEvent[] = [];
  #flushing: Promise<void> | undefined;
  #broken = false;
  #next = 0;

  constructor(store: RunEventStore, runId: string, log: (line: string) => void) {
    this.#store = store;
    this.#runId = runId;
    this.#log = log;
  }

  /**
   * Queues an event of the run's log (in the log's order) for the table. `delta`: the event's delta against the
   * previous event of its chain, when the caller made it (`values-encoder.ts`; null: the event starts its chain).
   */
  write(event: RunEvent, delta?: string | null): void {
    if (this.#broken) return;
    this.#next = event.id + 1;
    this.#queue.push(delta === undefined ? this.#encode(event) : this.#given(event, delta));
    this.#kick();
  }

  /** Resolves once every queued row is written (or given up). */
  async flush(): Promise<void> {
    this.#kick();
    while (this.#flushing) await this.#flushing;
  }

  /** Stores the end marker (after everything queued): readers elsewhere stop there. */
  async close(): Promise<void> {
    if (!this.#broken) this.#queue.push({ seq: this.#next, event: END_EVENT, chain: null, delta: false, data: "null" });
    await this.flush();
  }

  #encode(event: RunEvent): StoredEvent {
    const row: StoredEvent = { seq: event.id, event: event.event, chain: null, delta: false, data: event.json };
    if (!CHAINED.has(event.event)) return row;
    const parsed: unknown = JSON.parse(event.json);
    const chain = chainOf(event.event, parsed);
    if (chain === null) return row;
    const previous = this.#chains.get(chain);
    this.#chains.set(chain, parsed);
    if (previous === undefined) return { ...row, chain };
    const delta = JSON.stringify(diff(previous, parsed));
    return delta.length < event.json.length ? { ...row, chain, delta: true, data: delta } : { ...row, chain };
  }

  /** A `values` event whose delta came with it: nothing to parse or compare here. */
  #given(event: RunEvent, delta: string | null): StoredEvent {
    const chain = event.event;
    // Whatever this writer remembered of the chain is older than the caller's previous event.
    this.#chains.delete(chain);
    const row: StoredEvent = { seq: event.id, event: event.event, chain, delta: false, data: event.json };
    return delta !== null && delta.length < event.json.length ? { ...row, delta: true, data: delta } : row;
  }

  #kick(): void {
    if (this.#flushing || this.#queue.length === 0) return;
    this.#flushing = this.#drain().finally(() => {
      this.#flushing = undefined;
      // Events queued while the last insert finished.
      this.#kick();
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0 && !this.#broken) {
      const batch = this.#queue.slice(0, MAX_BATCH);
      if (await this.#append(batch)) this.#queue.splice(0, batch.length);
      else this.#giveUp();
    }
  }

  async #append(batch: StoredEvent[]): Promise<boolean> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await this.#store.append(this.#runId, batch);
        return true;
      } catch (error) {
        const pause = RETRY_DELAYS_MS[attempt];
        if (pause === undefined) {
          this.#log(
            `could not store the events of run ${this.#runId}: ${String(error)}; other instances will see its state, not its events`,
          );
          return false;
        }
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /** A gap would break ordering and the delta chains: store nothing more for this run. */
  #giveUp(): void {
    this.#broken = true;
    this.#queue = [];
  }
}
