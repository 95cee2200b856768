/**
 * The transcript: the user's messages, the agent's (streamed token by token),
 * its proposed tool calls, tool results in one line each, and final answers
 * with their citations (an AI message carrying `warrant_result`).
 */
import type { Message } from "@langchain/langgraph-sdk";
import { evidenceOf, isRecord, resultOf } from "../read";
import type { AgentValues } from "../types";
import { describeAction, toolWords, VIEWER_ZONE } from "../wording";
import { Answer } from "./Answer";

/** A tool result in one line: its error code when it failed or was refused. */
function outcomeOf(message: Message): string {
  if (message.type !== "tool" || message.status !== "error") return "done";
  try {
    const parsed: unknown = JSON.parse(textOf(message.content));
    // observe writes `{"error": {"code", "message"}}` for refused and failed calls.
    const error = isRecord(parsed) ? parsed.error : undefined;
    const code = isRecord(error) ? error.code : error;
    if (typeof code === "string") return "was refused or failed";
  } catch {
    // Not JSON: the plain word will do.
  }
  return "was refused or failed";
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : "")).join("");
  return "";
}

export function MessageList({ messages, values }: { messages: Message[]; values: AgentValues }) {
  const evidence = evidenceOf(values);
  if (messages.length === 0)
    return <p className="empty">Ask about your notes, or ask for a study plan in your calendar.</p>;
  return (
    <ol className="messages" aria-label="Messages" aria-live="polite">
      {messages.map((message, index) => {
        const key = message.id ?? String(index);
        if (message.type === "human") {
          return (
            <li key={key} className="message human">
              <span className="speaker">You</span>
              <p>{textOf(message.content)}</p>
            </li>
          );
        }
        if (message.type === "tool") {
          return (
            <li key={key} className="message tool">
              <span className="speaker">Step</span> {toolWords(message.name ?? "tool")}: {outcomeOf(message)}
            </li>
          );
        }
        if (message.type !== "ai") return null;
        const result = resultOf({
          result: (isRecord(message.additional_kwargs)
            ? message.additional_kwargs.warrant_result
            : undefined) as AgentValues["result"],
        });
        const calls = message.tool_calls ?? [];
        return (
          <li key={key} className="message ai">
            <span className="speaker">Assistant</span>
            {result ? (
              <Answer result={result} evidence={evidence} />
            ) : (
              textOf(message.content) && <p>{textOf(message.content)}</p>
            )}
            {calls.length > 0 && (
              <ul className="proposals" aria-label="Proposed tool calls">
                {calls.map((call, callIndex) => (
                  <li key={call.id ?? callIndex}>
                    Wants to: {describeAction(call.name, isRecord(call.args) ? call.args : {}, VIEWER_ZONE).summary}
                  </li>
                ))}
              </ul>
            )}
          </li>
        );
      })}
    </ol>
  );
}
