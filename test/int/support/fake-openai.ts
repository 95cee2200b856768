/**
 * A fake OpenAI-compatible Chat Completions server for tests (node:http on
 * 127.0.0.1, port 0). It plays scripted completions in order, as one JSON
 * body or as SSE chunks depending on whether the client asked to stream,
 * and records every request body. A request with nothing scripted for it
 * gets a 500, so an unexpected extra model call fails loudly.
 *
 * Used in-process (model-planner.test.ts) and by server child processes
 * through `OPENAI_BASE_URL` (server-process.test.ts).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedToolCall {
  /** Omitted on the wire when undefined, as some local servers do. */
  id?: string;
  name: string;
  arguments: string;
}

/** A completion the fake renders either as one JSON body or as SSE chunks. */
export interface ScriptedCompletion {
  kind: "completion";
  content?: string | null;
  tool_calls?: ScriptedToolCall[];
  finish_reason: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
}

/** An HTTP error answer. */
export interface ScriptedFailure {
  kind: "failure";
  status: number;
  message: string;
}

/** Accepts the request and never answers (for timeouts). */
export interface ScriptedSilence {
  kind: "silence";
}

export type Scripted = ScriptedCompletion | ScriptedFailure | ScriptedSilence;

export interface RecordedRequest {
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

export interface FakeOpenAI {
  baseUrl: string;
  requests: RecordedRequest[];
  enqueue(...responses: Scripted[]): void;
  /** How many scripted responses no request has used yet. */
  pending(): number;
  close(): Promise<void>;
}

/** Argument text is streamed in pieces this small so the client must reassemble it. */
const STREAM_PIECE_LENGTH = 4;

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: Scripted[] = [];
  const requests: RecordedRequest[] = [];
  const server = http.createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    let text = "";
    for await (const piece of request) text += String(piece);
    const body: unknown = JSON.parse(text);
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new Error("body is not an object");
    const record = body as Record<string, unknown>;
    requests.push({ path: request.url ?? "", authorization: request.headers.authorization, body: record });
    const next = queue.shift();
    if (request.method !== "POST" || request.url !== "/v1/chat/completions" || next === undefined) {
      sendJson(response, 500, { error: { message: `unscripted request ${request.method} ${request.url}` } });
      return;
    }
    if (next.kind === "silence") return;
    if (next.kind === "failure") {
      sendJson(response, next.status, { error: { message: next.message, type: "server_error" } });
      return;
    }
    // Each completion has its own id, as on real servers (stream readers group chunks by it).
    const id = `chatcmpl-fake-${requests.length}`;
    if (record["stream"] === true) sendStream(response, id, next, includeUsage(record));
    else sendJson(response, 200, completionBody(id, next));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...responses) => queue.push(...responses),
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        // Keep-alive and never-answered sockets would hold `close` open.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function includeUsage(body: Record<string, unknown>): boolean {
  const options = body["stream_options"];
  return typeof options === "object" && options !== null && (options as Record<string, unknown>)["include_usage"] === true;
}

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function wireToolCall(call: ScriptedToolCall): Record<string, unknown> {
  return {
    ...(call.id !== undefined ? { id: call.id } : {}),
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  };
}

function wireUsage(completion: ScriptedCompletion): Record<string, number> | undefined {
  if (completion.usage === undefined) return undefined;
  const { prompt_tokens, completion_tokens } = completion.usage;
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

function completionBody(id: string, completion: ScriptedCompletion): Record<string, unknown> {
  const message: Record<string, unknown> = { role: "assistant", content: completion.content ?? null };
  if (completion.tool_calls !== undefined) message["tool_calls"] = completion.tool_calls.map(wireToolCall);
  return {
    id,
    object: "chat.completion",
    created: 1,
    model: "fake-model",
    choices: [{ index: 0, message, finish_reason: completion.finish_reason }],
    ...(completion.usage !== undefined ? { usage: wireUsage(completion) } : {}),
  };
}

function pieces(text: string): string[] {
  const result: string[] = [];
  for (let start = 0; start < text.length; start += STREAM_PIECE_LENGTH) result.push(text.slice(start, start + STREAM_PIECE_LENGTH));
  return result;
}

/** The same completion as OpenAI streams it: role, content pieces, each call's head then argument pieces, finish, usage. */
function sendStream(response: http.ServerResponse, id: string, completion: ScriptedCompletion, withUsage: boolean): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const frame = { id, object: "chat.completion.chunk", created: 1, model: "fake-model" };
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    response.write(`data: ${JSON.stringify({ ...frame, choices, ...extra })}\n\n`);
  const delta = (value: Record<string, unknown>, finish: string | null = null) => [
    { index: 0, delta: value, finish_reason: finish },
  ];

  send(delta({ role: "assistant", content: "" }));
  for (const piece of pieces(completion.content ?? "")) send(delta({ content: piece }));
  (completion.tool_calls ?? []).forEach((call, index) => {
    const head = { index, ...(call.id !== undefined ? { id: call.id } : {}), type: "function" };
    send(delta({ tool_calls: [{ ...head, function: { name: call.name, arguments: "" } }] }));
    for (const piece of pieces(call.arguments)) send(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  send(delta({}, completion.finish_reason));
  const usage = wireUsage(completion);
  if (withUsage && usage !== undefined) send([], { usage });
  response.end("data: [DONE]\n\n");
}
