/**
 * The bench's model: one in-repo OpenAI-compatible Chat Completions server
 * (non-streaming) that every variant reaches over HTTP through `ChatOpenAI`.
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
import { FINAL_ANSWER, USER_ID, nextScriptedMove, stepsOf } from "./script.js";

/** What the server answers when the request has left the model's context. */
export const LOST_TASK_ANSWER = "I no longer see the question.";

export interface ScriptedEndpoint {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  /** Starts keeping request bodies (dropping any kept before). */
  record(): void;
  /** The bodies kept since `record()`, and stops keeping them. */
  recorded(): Record<string, unknown>[];
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

export async function startScriptedEndpoint(): Promise<ScriptedEndpoint> {
  let kept: Json[] | undefined;
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
      if (!isRecord(body) || request.url !== "/v1/chat/completions" || body["stream"] === true) {
        response.writeHead(400, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: "the bench endpoint takes non-streaming chat completions" } }));
        return;
      }
      kept?.push(body);
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
    record() {
      kept = [];
    },
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
