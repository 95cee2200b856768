/**
 * Following a run: its events as SSE (on whichever instance the client
 * reached, resumable with `Last-Event-ID`), and the thread's values once it
 * has ended, as `runs.wait` and `runs.join` return them.
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { RunRow } from "../../stores/thread-rows.js";
import { errorBody } from "../api-error.js";
import type { Env, RouteContext } from "../context.js";
import { eventInModes, toWire, toWireJson } from "../events.js";
import { ownerOf } from "./types.js";
import { pendingInterrupts } from "./outcome.js";
import { isDatabaseBusy, isDatabaseUnavailable } from "../../errors.js";

/** The thread's values as `runs.wait` and `join` return them (the run's error when it failed). */
export async function finalValues(
  context: Pick<RouteContext, "snapshotOf">,
  run: RunRow | undefined,
  threadId: string,
): Promise<Record<string, unknown>> {
  if (run?.status === "error") return { __error__: run.error ?? { error: "Error", message: "the run failed" } };
  const snapshot = await context.snapshotOf(threadId);
  const values = toWire<Record<string, unknown>>(snapshot.values ?? {});
  const pending = pendingInterrupts(snapshot);
  return pending.length > 0 ? { ...values, __interrupt__: toWire(pending) } : values;
}

/** Waits for the run to end (or the client to go away) and answers with the thread's final values. */
export async function joinRun(c: Context<Env>, context: RouteContext, run: RunRow): Promise<Response> {
  const owner = ownerOf(context.principalOf(c));
  const ended = await context.manager.wait(owner, run.thread_id, run.run_id, c.req.raw.signal);
  return c.json(await finalValues(context, ended, run.thread_id));
}

/**
 * A run's events as SSE, on whichever instance the client reached: the run
 * manager reads them from memory when this process executes the run, else
 * from Postgres, with the same ids, so `Last-Event-ID` resumes anywhere.
 */
export function streamRun(c: Context<Env>, context: RouteContext, run: RunRow): Response {
  const lastEventId = parseLastEventId(c.req.header("last-event-id"));
  const modes = c.req.queries("stream_mode");
  // A run that ended with no stored event (before the events table, or past its retention): its final values.
  const unstored = async (ended: RunRow) => [
    { id: undefined, event: "values", json: toWireJson(await finalValues(context, ended, run.thread_id)) ?? "null" },
  ];
  return streamSSE(c, async (stream) => {
    // A client that goes away only stops its own reader; the run goes on.
    stream.onAbort(() => undefined);
    // Comment lines while the run is quiet (a slow tool, a pending model call): the SDK
    // learns the cadence from them and reconnects (Last-Event-ID) when a socket dies.
    const heartbeat = setInterval(
      () => void stream.write(": heartbeat\n\n").catch(() => undefined),
      context.heartbeatMs,
    );
    try {
      const owner = ownerOf(context.principalOf(c));
      for await (const event of context.manager.events(owner, run, lastEventId, c.req.raw.signal, unstored)) {
        if (!eventInModes(event.event, modes)) continue;
        await stream.writeSSE({
          ...(event.id === undefined ? {} : { id: String(event.id) }),
          event: event.event,
          data: event.json,
        });
      }
    } catch (error) {
      // The stream ends with a typed event, never the database's text; anything else is also logged (by Hono).
      const typed =
        isDatabaseUnavailable(error) || isDatabaseBusy(error)
          ? errorBody(error.code, error.message)
          : errorBody("internal_error", "the server failed to read the run's events");
      await stream.writeSSE({ event: "error", data: JSON.stringify(typed) }).catch(() => undefined);
      if (typed.error === "internal_error") throw error;
    } finally {
      clearInterval(heartbeat);
    }
  });
}

/** A `Last-Event-ID` header as an event id; anything else reads from the start. */
export function parseLastEventId(header: string | undefined): number | undefined {
  if (header === undefined || !/^[0-9]{1,9}$/.test(header)) return undefined;
  return Number(header);
}
