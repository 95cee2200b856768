/**
 * Reads a run's events from Postgres, for an instance that does not execute
 * the run (or no longer remembers it): the same ids and the same data the
 * executing process sent, deltas rebuilt (`event-delta.ts`), from any
 * `Last-Event-ID`, while the run goes on and after it ended.
 *
 * The run is over when its end marker is read. A run whose process died
 * has none: once its row says it ended (the lease expired and somebody
 * marked it), the reader sends the row's error, without an id (it is not
 * one of the run's events, so a client that reconnects again is not told to
 * skip anything), and stops.
 */
import { END_EVENT, type RunEventStore, type StoredEvent } from "../../stores/run-events-store.js";
import type { RunRow } from "../../stores/thread-rows.js";
import { patch, type Delta } from "./event-delta.js";
import { toWireJson } from "../events.js";

/** An event as sent: `id` undefined for what is not one of the run's stored events. */
export interface SentEvent {
  id: number | undefined;
  event: string;
  json: string;
}

export interface StoredReadOptions {
  store: RunEventStore;
  runId: string;
  /** The client's `Last-Event-ID` (everything when undefined). */
  afterId: number | undefined;
  signal?: AbortSignal | undefined;
  /** The run's row when it has ended, else undefined (called when no new event was found). */
  ended: () => Promise<RunRow | undefined>;
  /** What to send for a run that ended with no event stored (before this table, or past its retention). */
  unstored: (run: RunRow) => Promise<SentEvent[]>;
  /** Pause between reads while nothing new is stored. */
  pollMs: number;
  /** Resolves early when new events may have been stored (a notification); optional. */
  wake?: (signal: AbortSignal) => Promise<void>;
}

const PAGE = 500;

export async function* readStoredEvents(options: StoredReadOptions): AsyncGenerator<SentEvent> {
  const { store, runId, signal } = options;
  const chains = new Map<string, unknown>();
  let cursor = options.afterId ?? -1;
  let sawAny = cursor >= 0;
  let first = true;
  while (!signal?.aborted) {
    const rows = await store.read(runId, cursor, { limit: PAGE, withBases: first && cursor >= 0 });
    first = false;
    let fresh = 0;
    for (const row of rows) {
      const json = decode(row, chains);
      if (row.seq <= cursor) continue; // a base that later deltas build on
      fresh += 1;
      sawAny = true;
      cursor = row.seq;
      if (row.event === END_EVENT) return;
      yield { id: row.seq, event: row.event, json };
    }
    if (fresh === PAGE) continue;
    if (fresh === 0) {
      const run = await options.ended();
      // The run's events are written before its row says it ended: one more read sees them all.
      if (run && (await store.read(runId, cursor, { limit: 1, withBases: false })).length === 0) {
        if (!sawAny) yield* await options.unstored(run);
        else if (run.error) yield { id: undefined, event: "error", json: toWireJson(run.error) ?? "null" };
        return;
      }
      if (run) continue;
    }
    await pause(options, signal);
  }
}

/** The event's wire JSON, rebuilding a delta on its chain's previous event (and remembering this one). */
function decode(row: StoredEvent, chains: Map<string, unknown>): string {
  if (row.chain === null) return row.data;
  const value = row.delta
    ? patch(chains.get(row.chain), JSON.parse(row.data) as Delta)
    : (JSON.parse(row.data) as unknown);
  chains.set(row.chain, value);
  return row.delta ? JSON.stringify(value) : row.data;
}

async function pause(options: StoredReadOptions, signal: AbortSignal | undefined): Promise<void> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    await Promise.race([
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs);
        stop.signal.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      }),
      ...(options.wake ? [options.wake(stop.signal)] : []),
    ]);
  } finally {
    stop.abort();
    signal?.removeEventListener("abort", onAbort);
  }
}
