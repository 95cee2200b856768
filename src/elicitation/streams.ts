/**
 * Where a thread's running run streams, in this process: the run executor
 * (src/server/runs/execution.ts) registers its emitter while the run executes,
 * and the elicitation broker pushes the `elicitation` event through it. The
 * call that elicits always runs in the process executing the run, so a
 * process-local registry suffices; the event itself reaches other instances
 * through the run's stored events like every other event.
 */

/** Pushes one event on a run's stream. */
export type StreamPush = (event: string, data: unknown) => void;

const streams = new Map<string, { runId: string; push: StreamPush }>();

/** Registers the stream of the run executing on `threadId`; returns its unregistration. */
export function registerRunStream(threadId: string, runId: string, push: StreamPush): () => void {
  const entry = { runId, push };
  streams.set(threadId, entry);
  return () => {
    if (streams.get(threadId) === entry) streams.delete(threadId);
  };
}

/** Pushes on the stream of the run executing on `threadId`; false when there is none in this process. */
export function pushToRun(threadId: string, event: string, data: unknown): boolean {
  const entry = streams.get(threadId);
  if (!entry) return false;
  entry.push(event, data);
  return true;
}
