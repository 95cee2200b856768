/**
 * The OpenAI Chat Completions wire format, server side: one completion
 * rendered as a JSON body or as the SSE chunks OpenAI streams, and a
 * node:http server on 127.0.0.1 (port 0) that hands each request body to an
 * answerer. Shared by the simulated model (`endpoint.ts`) and the scripted
 * fake the tests use (`test/int/support/fake-openai.ts`).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface WireToolCall {
  /** Omitted on the wire when undefined, as some local servers do. */
  id?: string;
  name: string;
  /** The argument text exactly as sent: it need not be JSON. */
  arguments: string;
}

/** One assistant completion, before it is rendered. */
export interface WireCompletion {
  content?: string | null;
  tool_calls?: WireToolCall[];
  finish_reason: string;
  /** `prompt_tokens_details.cached_tokens`: the part of the prompt OpenAI read from its prompt cache. */
  usage?: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: unknown } };
  /**
   * Other fields of the assistant message, as some providers send them
   * (`refusal`, `reasoning_content`): in the message, or streamed in one delta before the content.
   */
  extra?: Record<string, unknown>;
}

/** What an answerer tells the server to send for one request. */
export type WireAnswer =
  | { kind: "completion"; completion: WireCompletion }
  | { kind: "failure"; status: number; message: string }
  /** Accepts the request and never answers (for timeouts). */
  | { kind: "silence" };

export interface WireRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

export interface WireServer {
  /** `http://127.0.0.1:<port>/v1`, what `OPENAI_BASE_URL` takes. */
  baseUrl: string;
  close(): Promise<void>;
}

/** The only route a chat client calls. */
export const COMPLETIONS_PATH = "/v1/chat/completions";
/** Request bodies larger than this are refused (413) before parsing. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Argument text is streamed in pieces this small so the client must reassemble it. */
const STREAM_PIECE_LENGTH = 4;

/**
 * Serves `answer` on 127.0.0.1, port 0. A body that is not a JSON object is
 * a 400; an answerer that throws is a 500 naming its error, so a broken
 * simulation fails loudly rather than looking like a model.
 */
export async function serveCompletions(
  answer: (request: WireRequest) => WireAnswer | Promise<WireAnswer>,
  identity: { model: string; idPrefix: string },
): Promise<WireServer> {
  let received = 0;
  const server = http.createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        sendJson(response, 500, {
          error: { message: error instanceof Error ? error.message : String(error), type: "server_error" },
        });
      else response.end();
    });
  });

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const text = await readBody(request);
    if (text === undefined)
      return sendJson(response, 413, { error: { message: "request body too large", type: "invalid_request_error" } });
    received += 1;
    const number = received;
    const body = parseObject(text);
    if (body === undefined)
      return sendJson(response, 400, {
        error: { message: "request body is not a JSON object", type: "invalid_request_error" },
      });
    const next = await answer({
      method: request.method ?? "",
      path: request.url ?? "",
      authorization: request.headers.authorization,
      body,
    });
    if (next.kind === "silence") return;
    if (next.kind === "failure")
      return sendJson(response, next.status, { error: { message: next.message, type: "server_error" } });
    // Each completion has its own id (numbered by request), as on real servers: stream readers group chunks by it.
    const id = `${identity.idPrefix}${number}`;
    if (body["stream"] === true) sendStream(response, id, identity.model, next.completion, includeUsage(body));
    else sendJson(response, 200, completionBody(id, identity.model, next.completion));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        // Keep-alive and never-answered sockets would hold `close` open.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(request: http.IncomingMessage): Promise<string | undefined> {
  const pieces: Buffer[] = [];
  let size = 0;
  for await (const piece of request) {
    const buffer = Buffer.isBuffer(piece) ? piece : Buffer.from(String(piece));
    size += buffer.length;
    if (size > MAX_BODY_BYTES) return undefined;
    pieces.push(buffer);
  }
  return Buffer.concat(pieces).toString("utf8");
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function includeUsage(body: Record<string, unknown>): boolean {
  const options = body["stream_options"];
  return (
    typeof options === "object" && options !== null && (options as Record<string, unknown>)["include_usage"] === true
  );
}

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function wireToolCall(call: WireToolCall): Record<string, unknown> {
  return {
    ...(call.id !== undefined ? { id: call.id } : {}),
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  };
}

function wireUsage(completion: WireCompletion): Record<string, unknown> | undefined {
  if (completion.usage === undefined) return undefined;
  const { prompt_tokens, completion_tokens, prompt_tokens_details } = completion.usage;
  return {
    prompt_tokens,
    completion_tokens,
    total_tokens: prompt_tokens + completion_tokens,
    ...(prompt_tokens_details !== undefined ? { prompt_tokens_details } : {}),
  };
}

/** The non-streamed body of one completion. */
export function completionBody(id: string, model: string, completion: WireCompletion): Record<string, unknown> {
  const message: Record<string, unknown> = {
    role: "assistant",
    content: completion.content ?? null,
    ...completion.extra,
  };
  if (completion.tool_calls !== undefined) message["tool_calls"] = completion.tool_calls.map(wireToolCall);
  return {
    id,
    object: "chat.completion",
    created: 1,
    model,
    choices: [{ index: 0, message, finish_reason: completion.finish_reason }],
    ...(completion.usage !== undefined ? { usage: wireUsage(completion) } : {}),
  };
}

function pieces(text: string): string[] {
  const result: string[] = [];
  for (let start = 0; start < text.length; start += STREAM_PIECE_LENGTH)
    result.push(text.slice(start, start + STREAM_PIECE_LENGTH));
  return result;
}

/** The same completion as OpenAI streams it: role, content pieces, each call's head then argument pieces, finish, usage. */
function sendStream(
  response: http.ServerResponse,
  id: string,
  model: string,
  completion: WireCompletion,
  withUsage: boolean,
): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const frame = { id, object: "chat.completion.chunk", created: 1, model };
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    response.write(`data: ${JSON.stringify({ ...frame, choices, ...extra })}\n\n`);
  const delta = (value: Record<string, unknown>, finish: string | null = null) => [
    { index: 0, delta: value, finish_reason: finish },
  ];

  send(delta({ role: "assistant", content: "" }));
  if (completion.extra !== undefined) send(delta(completion.extra));
  for (const piece of pieces(completion.content ?? "")) send(delta({ content: piece }));
  (completion.tool_calls ?? []).forEach((call, index) => {
    const head = { index, ...(call.id !== undefined ? { id: call.id } : {}), type: "function" };
    send(delta({ tool_calls: [{ ...head, function: { name: call.name, arguments: "" } }] }));
    for (const piece of pieces(call.arguments))
      send(delta({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  send(delta({}, completion.finish_reason));
  const usage = wireUsage(completion);
  if (withUsage && usage !== undefined) send([], { usage });
  response.end("data: [DONE]\n\n");
}
