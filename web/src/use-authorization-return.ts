/**
 * While the run waits for the owner to connect a server (an
 * `authorization_required` interrupt), the owner authorizes in another tab
 * and the server's callback resumes the run without this page. So the page
 * looks again when it gets the focus back and every few seconds: a run
 * going on the thread is joined (followed live); a thread no longer waiting
 * for authorization is reopened, so the page shows its current state. A
 * thread waiting for a write's MCP task (`task_wait`) is followed the same
 * way: the server's poller resumes it when the task ends.
 */
import { useEffect, useRef } from "react";
import type { Client, StreamMode } from "@langchain/langgraph-sdk";
import { authorizationsOf, taskWaitsOf } from "./read";

interface Joinable {
  isLoading: boolean;
  joinStream: (runId: string, lastEventId?: string, options?: { streamMode?: StreamMode[] }) => Promise<void>;
}

const POLL_MS = 3_000;

function stillWaiting(interrupts: unknown): boolean {
  if (typeof interrupts !== "object" || interrupts === null) return false;
  return Object.values(interrupts as Record<string, unknown>).some(
    (list) =>
      Array.isArray(list) &&
      list.some((item) => {
        const value = (item as { value?: unknown })?.value;
        return authorizationsOf(value).length > 0 || taskWaitsOf(value).length > 0;
      }),
  );
}

export function useAuthorizationReturn(options: {
  client: Client;
  threadId: string | null;
  waiting: boolean;
  stream: Joinable;
  streamMode: StreamMode[];
  reopen: () => void;
}): void {
  const latest = useRef(options);
  latest.current = options;
  const { client, threadId, waiting } = options;
  useEffect(() => {
    if (!waiting || threadId === null) return;
    let current = true;
    let busy = false;
    const look = async () => {
      if (!current || busy || latest.current.stream.isLoading) return;
      busy = true;
      try {
        const runs = await client.runs.list(threadId, { status: "running", limit: 1 });
        const run = runs[0];
        if (!current) return;
        if (run) {
          void latest.current.stream.joinStream(run.run_id, undefined, { streamMode: latest.current.streamMode });
          return;
        }
        const thread = await client.threads.get(threadId);
        if (current && !stillWaiting(thread.interrupts)) latest.current.reopen();
      } catch {
        // The server did not answer: look again at the next tick or focus.
      } finally {
        busy = false;
      }
    };
    const onFocus = () => void look();
    const timer = setInterval(onFocus, POLL_MS);
    window.addEventListener("focus", onFocus);
    document.addEventListener("visibilitychange", onFocus);
    return () => {
      current = false;
      clearInterval(timer);
      window.removeEventListener("focus", onFocus);
      document.removeEventListener("visibilitychange", onFocus);
    };
  }, [client, threadId, waiting]);
}
