/**
 * Opening a thread whose run is still going (a reload mid-run, another tab,
 * a run started elsewhere) joins that run's stream, so the page follows it
 * live instead of showing the state it had when the page loaded.
 */
import { useEffect, useRef } from "react";
import type { Client, StreamMode } from "@langchain/langgraph-sdk";

interface Joinable {
  isLoading: boolean;
  joinStream: (runId: string, lastEventId?: string, options?: { streamMode?: StreamMode[] }) => Promise<void>;
}

export function useRejoin(client: Client, threadId: string | null, stream: Joinable, streamMode: StreamMode[]): void {
  // Read at the moment the thread opens, not as a dependency: a run this page started is already streamed.
  const latest = useRef(stream);
  latest.current = stream;
  useEffect(() => {
    if (threadId === null || latest.current.isLoading) return;
    let current = true;
    client.runs.list(threadId, { status: "running", limit: 1 }).then(
      (runs) => {
        const run = runs[0];
        if (current && run && !latest.current.isLoading)
          void latest.current.joinStream(run.run_id, undefined, { streamMode });
      },
      () => undefined, // Nothing to join: the thread's state is what the page shows.
    );
    return () => {
      current = false;
    };
  }, [client, threadId, streamMode]);
}
