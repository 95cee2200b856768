/**
 * The bench's model: one in-repo server (non-streaming) that every variant
 * reaches over HTTP, speaking OpenAI Chat Completions at
 * `/v1/chat/completions` (`ChatOpenAI`) and Anthropic Messages at
 * `/v1/messages` (`ChatAnthropic`; usage reported from the prompt cache its
 * `cache_control` marks would get, bench/anthropic-cache.ts, while recording).
 * It follows bench/script.ts from the request body alone, as a model would:
 * the request it works on is the newest user message carrying the bench
 * mark, the step is the number of tool results after it. A request in which
 * the mark is gone gets a final answer that is not the script's, so a thread
 * that lost its task fails the bench's check instead of passing silently.
 *
 * `user_id` is added to a call's arguments only when the offered tool's
 * schema has it (the peers bind the server's own schema; Warrant injects
 * it). Warrant's planner asks for a JSON answer (its system message says so);
 * the peers get plain text. `record()` keeps the request bodies of the
 * threads that follow, for the prompt-cache figures.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { AnthropicCache, type AnthropicUsage } from "./anthropic-cache.js";
import { FINAL_ANSWER, USER_ID, nextScriptedMove, stepsOf } from "./script.js";

/** What the server answers when the request has left the model's context. */
export const LOST_TASK_ANSWER = "I no longer see the question.";

export interface ScriptedEndpoint {
  /** `http://127.0.0.1:<port>/v1` (Chat Completions) */
  baseUrl: string;
  /** `http://127.0.0.1:<port>`: what `ChatAnthropic` takes as `anthropicApiUrl` (Messages at `/v1/messages`). */
  anthropicBaseUrl: string;
  /** Starts keeping request bodies (dropping any kept before); an Anthropic cache starts empty. */
  record(): void;
  /** The bodies kept since `record()`, and stops keeping them. */
  recorded(): Record<string, unknown>[];
  /** The Anthropic usage reported for each Messages request kept since `record()`, in order. */
  recordedAnthropicUsage(): AnthropicUsage[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((part) => (isRecord(part) && typeof part["text"] === "string" ? part["text"] : "")).join("")
      : "";

/** Whether the offered tool `name` takes a `user_id` argument. */
function takesUserId(tools: unknown, name: string): boolean {
  if (!Array.isArray(tools)) return false;
  for (const tool of tools) {
    const fn = isRecord(tool) ? tool["function"] : undefined;
    if (!isRecord(fn) || fn["name"] !== name) continue;
    const properties = isRecord(fn["parameters"]) ? fn["parameters"]["properties"] : undefined;
    return isRecord(properties) && Object.hasOwn(properties, "user_id");
  }
  return false;
}

/** The assistant message the script answers `body` with. */
export function scriptedReply(body: Json): { message: Json; finish_reason: string } {
  const messages = Array.isArray(body["messages"]) ? body["messages"].filter(isRecord) : [];
  let requestIndex = -1;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.["role"] === "user" && stepsOf(textOf(message["content"])) > 0) {
      requestIndex = index;
      break;
    }
  }
  const wantsJson = messages.some(
    (message) => message["role"] === "system" && textOf(message["content"]).includes('"citations"'),
  );
  const final = (answer: string) => ({
    message: {
      role: "assistant",
      content: wantsJson ? JSON.stringify({ answer, citations: [], abstained: false }) : answer,
    },
    finish_reason: "stop",
  });
  if (requestIndex < 0) return final(LOST_TASK_ANSWER);
  const request = textOf(messages[requestIndex]?.["content"]);
  const done = messages.slice(requestIndex + 1).filter((message) => message["role"] === "tool").length;
  const move = nextScriptedMove(request, done);
  if (!move) return final(FINAL_ANSWER);
  const args = takesUserId(body["tools"], move.tool) ? { ...move.args, user_id: USER_ID } : move.args;
  return {
    message: {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: `call_${randomUUID()}`,
          type: "function",
          function: { name: move.tool, arguments: JSON.stringify(args) },
        },
      ],
    },
    finish_reason: "tool_calls",
  };
}

/** Anthropic's `messages` and `system` in the Chat Completions shape `scriptedReply` reads. */
function asChatCompletions(body: Json): Json {
  const messages: Json[] = [];
  if (body["system"] !== undefined) messages.push({ role: "system", content: textOf(body["system"]) });
  for (const message of Array.isArray(body["messages"]) ? body["messages"].filter(isRecord) : []) {
    const content = message["content"];
    if (message["role"] !== "user" || !Array.isArray(content)) {
      messages.push({ role: message["role"], content: typeof content === "string" ? content : textOf(content) });
      continue;
    }
    for (const block of content.filter(isRecord))
      messages.push(block["type"] === "tool_result" ? { role: "tool" } : { role: "user", content: textOf([block]) });
  }
  const tools = (Array.isArray(body["tools"]) ? body["tools"].filter(isRecord) : []).map((tool) => ({
    type: "function",
    function: { name: tool["name"], parameters: tool["input_schema"] },
  }));
  return { messages, tools };
}

/** The scripted reply to an Anthropic Messages request, as Anthropic answers it. */
function anthropicReply(body: Json, usage: AnthropicUsage): Json {
  const { message, finish_reason } = scriptedReply(asChatCompletions(body));
  const calls = Array.isArray(message["tool_calls"]) ? message["tool_calls"].filter(isRecord) : [];
  const content =
    calls.length > 0
      ? calls.map((call) => {
          const fn = isRecord(call["function"]) ? call["function"] : {};
          return {
            type: "tool_use",
            id: `toolu_${randomUUID().replaceAll("-", "")}`,
            name: fn["name"],
            input: JSON.parse(String(fn["arguments"])),
          };
        })
      : [{ type: "text", text: String(message["content"]) }];
  return {
    id: `msg_${randomUUID().replaceAll("-", "")}`,
    type: "message",
    role: "assistant",
    model: typeof body["model"] === "string" ? body["model"] : "bench",
    content,
    stop_reason: finish_reason === "tool_calls" ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { ...usage, output_tokens: 20 },
  };
}

export async function startScriptedEndpoint(): Promise<ScriptedEndpoint> {
  let kept: Json[] | undefined;
  let usages: AnthropicUsage[] = [];
  let cache = new AnthropicCache();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        body = undefined;
      }
      const anthropic = request.url === "/v1/messages";
      if (!isRecord(body) || !(anthropic || request.url === "/v1/chat/completions") || body["stream"] === true) {
        response.writeHead(400, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: "the bench endpoint takes non-streaming requests" } }));
        return;
      }
      kept?.push(body);
      if (anthropic) {
        // Cache usage is worked out only while recording (it tokenizes); otherwise a size-based estimate.
        const usage: AnthropicUsage =
          kept !== undefined
            ? cache.usage(body)
            : {
                input_tokens: Math.ceil(Buffer.concat(chunks).length / 4),
                cache_read_input_tokens: 0,
                cache_creation_input_tokens: 0,
              };
        if (kept !== undefined) usages.push(usage);
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(anthropicReply(body, usage)));
        return;
      }
      const { message, finish_reason } = scriptedReply(body);
      const promptChars = Buffer.concat(chunks).length;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          id: `chatcmpl-${randomUUID()}`,
          object: "chat.completion",
          created: Math.floor(Date.now() / 1000),
          model: typeof body["model"] === "string" ? body["model"] : "bench",
          choices: [{ index: 0, message, finish_reason, logprobs: null }],
          // A size-based estimate: the budgets only need a plausible count.
          usage: { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: 20, total_tokens: 0 },
        }),
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    anthropicBaseUrl: `http://127.0.0.1:${port}`,
    record() {
      kept = [];
      usages = [];
      cache = new AnthropicCache();
    },
    recordedAnthropicUsage: () => usages,
    recorded() {
      const bodies = kept ?? [];
      kept = undefined;
      return bodies;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
