/** The signed-in user's threads (`threads.search`), newest first; a new conversation starts with no thread. */
import { useEffect, useState } from "react";
import type { Client, Thread } from "@langchain/langgraph-sdk";
import { isRecord } from "../read";
import { formatMoment, shorten, statusWords, VIEWER_ZONE } from "../wording";

/** What the person first asked in the thread, when its run does not name the request yet. */
function firstQuestion(values: unknown): string {
  const messages = isRecord(values) && Array.isArray(values.messages) ? values.messages : [];
  const first = messages.find((message) => isRecord(message) && (message.type === "human" || message.role === "user"));
  return isRecord(first) && typeof first.content === "string" ? first.content : "";
}

function titleOf(thread: Thread): string {
  const values = thread.values;
  const run = isRecord(values) ? values.run : undefined;
  const request = isRecord(run) && typeof run.request === "string" ? run.request : "";
  return request || firstQuestion(values) || `Conversation ${thread.thread_id.slice(0, 8)}`;
}

export function ThreadList({
  client,
  current,
  changed,
  onOpen,
  onProblem,
}: {
  client: Client;
  current: string | null;
  changed: number;
  onOpen: (id: string | null) => void;
  onProblem: (error: unknown) => void;
}) {
  const [threads, setThreads] = useState<Thread[]>([]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `changed` is the refresh trigger (bumped when a run changes the list).
  useEffect(() => {
    let live = true;
    client.threads.search({ limit: 50 }).then(
      (found) => live && setThreads([...found].sort((a, b) => b.updated_at.localeCompare(a.updated_at))),
      (error: unknown) => live && onProblem(error),
    );
    return () => {
      live = false;
    };
  }, [client, changed, onProblem]);
  return (
    <nav className="threads" aria-label="Your conversations">
      <button type="button" onClick={() => onOpen(null)}>
        New conversation
      </button>
      <ul>
        {threads.map((thread) => (
          <li key={thread.thread_id}>
            <button
              type="button"
              className={thread.thread_id === current ? "thread current" : "thread"}
              aria-current={thread.thread_id === current ? "page" : undefined}
              data-thread-id={thread.thread_id}
              onClick={() => onOpen(thread.thread_id)}
            >
              <span title={titleOf(thread)}>{shorten(titleOf(thread), 48)}</span>
              <small>
                {statusWords(thread.status)} · {formatMoment(thread.updated_at, VIEWER_ZONE)}
              </small>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
