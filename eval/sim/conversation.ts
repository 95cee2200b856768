/**
 * What the simulated model reads from one Chat Completions request: the
 * system and user text, the tools offered (with their schemas), its own
 * earlier tool calls and the tool results answering them, read back through
 * the planner's fence, and the evidence those results hold. Everything
 * comes from the request body alone, as it would for a real model: the
 * simulation keeps no memory of a conversation between requests.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { readFencedToolResult } from "../../src/planners/fence.js";
import type { ToolSpec } from "../../src/policy/contracts.js";
import type { Evidence } from "../../src/state/evidence.js";
import { extractEvidence } from "../../src/state/extract-evidence.js";

/** A call the model made earlier, as the request repeats it. */
export interface PastCall {
  id: string;
  name: string;
  /** The argument text as sent back. */
  argumentText: string;
  /** Parsed arguments when the text is a JSON object. */
  args: Record<string, unknown> | undefined;
}

/** A tool result in the request. */
export interface PastResult {
  callId: string;
  tool: string;
  ok: boolean;
  /** The quoted body, parsed (an object for JSON output). */
  body: unknown;
  /** The whole tool message content as received. */
  content: string;
}

export interface Conversation {
  /** The system messages' text, joined. */
  system: string;
  /** The newest user message: the request being worked on. */
  request: string;
  tools: ToolSpec[];
  /** Calls and results since the newest user message, oldest first. */
  calls: PastCall[];
  results: PastResult[];
  /** Assistant turns since the newest user message. */
  turns: number;
  /** Evidence in every tool result of the request, by ref. */
  evidence: Evidence[];
  /** The transcript rebuilt as LangChain messages (tool messages carry the parsed body as artifact). */
  messages: BaseMessage[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) => (isRecord(part) && typeof part["text"] === "string" ? part["text"] : ""))
    .join("");
}

function parseArguments(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function toolsOf(body: Record<string, unknown>): ToolSpec[] {
  const tools = Array.isArray(body["tools"]) ? body["tools"] : [];
  return tools.flatMap((tool: unknown) => {
    const fn = isRecord(tool) ? tool["function"] : undefined;
    if (!isRecord(fn) || typeof fn["name"] !== "string") return [];
    const parameters = isRecord(fn["parameters"]) ? fn["parameters"] : {};
    return [
      { name: fn["name"], description: typeof fn["description"] === "string" ? fn["description"] : "", parameters },
    ];
  });
}

function callsOf(message: Record<string, unknown>): PastCall[] {
  const calls = Array.isArray(message["tool_calls"]) ? message["tool_calls"] : [];
  return calls.flatMap((call: unknown) => {
    const fn = isRecord(call) ? call["function"] : undefined;
    if (!isRecord(call) || !isRecord(fn) || typeof fn["name"] !== "string") return [];
    const argumentText = typeof fn["arguments"] === "string" ? fn["arguments"] : "";
    return [
      {
        id: typeof call["id"] === "string" ? call["id"] : "",
        name: fn["name"],
        argumentText,
        args: parseArguments(argumentText),
      },
    ];
  });
}

/** A tool message read back: through the fence when it has one, else its raw text (an `{"error": …}` body is a failure). */
function resultOf(content: string, callId: string, names: ReadonlyMap<string, string>): PastResult {
  const fenced = readFencedToolResult(content);
  if (fenced)
    return {
      callId,
      tool: fenced.tool || (names.get(callId) ?? ""),
      ok: fenced.status === "ok",
      body: fenced.body,
      content,
    };
  const body = parseArguments(content) ?? content;
  const failed = isRecord(body) && isRecord(body["error"]);
  return { callId, tool: names.get(callId) ?? "", ok: !failed, body, content };
}

/** Reads a request body. Malformed parts are skipped, as a lenient server would. */
export function readConversation(body: Record<string, unknown>): Conversation {
  const wire = (Array.isArray(body["messages"]) ? body["messages"] : []).filter(isRecord);
  const names = new Map<string, string>();
  const system: string[] = [];
  const messages: BaseMessage[] = [];
  let request = "";
  let calls: PastCall[] = [];
  let results: PastResult[] = [];
  let turns = 0;
  const evidence = new Map<string, Evidence>();
  for (const message of wire) {
    const role = message["role"];
    const text = textOf(message["content"]);
    if (role === "system" || role === "developer") {
      system.push(text);
      messages.push(new SystemMessage(text));
    } else if (role === "user") {
      request = text;
      calls = [];
      results = [];
      turns = 0;
      messages.push(new HumanMessage(text));
    } else if (role === "assistant") {
      const made = callsOf(message);
      for (const call of made) names.set(call.id, call.name);
      calls.push(...made);
      turns += 1;
      messages.push(
        new AIMessage({
          content: text,
          tool_calls: made.map((call) => ({
            id: call.id,
            name: call.name,
            args: call.args ?? {},
            type: "tool_call" as const,
          })),
        }),
      );
    } else if (role === "tool") {
      const callId = typeof message["tool_call_id"] === "string" ? message["tool_call_id"] : "";
      const result = resultOf(text, callId, names);
      results.push(result);
      if (result.ok) for (const item of extractEvidence(result.body, result.tool, callId)) evidence.set(item.ref, item);
      messages.push(
        new ToolMessage({
          tool_call_id: callId,
          name: result.tool,
          content: text,
          status: result.ok ? "success" : "error",
          artifact: result.body,
        }),
      );
    }
  }
  return {
    system: system.join("\n\n"),
    request,
    tools: toolsOf(body),
    calls,
    results,
    turns,
    evidence: [...evidence.values()],
    messages,
  };
}
