/**
 * Every denied proposal of the thread's latest run. `decisions` holds only
 * the latest step's, so denials are collected from each state the stream
 * shows and, once the run is not streaming, from the thread's history.
 */
import { useEffect, useRef, useState } from "react";
import type { Client } from "@langchain/langgraph-sdk";
import { denialsOf } from "./read";
import type { AgentValues, Denial } from "./types";

const HISTORY_LIMIT = 100;

export function useRunDenials(client: Client, threadId: string | null, values: AgentValues, live: boolean): Denial[] {
  const runId = values.run?.run_id ?? null;
  const seen = useRef<{ runId: string | null; byCall: Map<string, Denial> }>({ runId: null, byCall: new Map() });
  const [fromHistory, setFromHistory] = useState<Denial[]>([]);

  if (seen.current.runId !== runId) seen.current = { runId, byCall: new Map() };
  for (const denial of denialsOf(values)) seen.current.byCall.set(denial.call_id, denial);

  useEffect(() => {
    if (live || threadId === null || runId === null) return;
    let current = true;
    client.threads.getHistory<AgentValues>(threadId, { limit: HISTORY_LIMIT }).then(
      (states) => {
        if (!current) return;
        const byCall = new Map<string, Denial>();
        for (const state of [...states].reverse()) {
          if (state.values?.run?.run_id === runId)
            for (const denial of denialsOf(state.values)) byCall.set(denial.call_id, denial);
        }
        setFromHistory([...byCall.values()]);
      },
      () => undefined, // The live collection still shows what the stream saw.
    );
    return () => {
      current = false;
    };
  }, [client, threadId, runId, live]);

  const merged = new Map(seen.current.byCall);
  for (const denial of fromHistory) merged.set(denial.call_id, denial);
  return [...merged.values()];
}
