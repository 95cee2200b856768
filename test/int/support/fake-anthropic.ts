/**
 * A scripted Anthropic Messages server for tests (node:http on 127.0.0.1,
 * port 0): `POST /v1/messages`, answered with one JSON body, or with the
 * event stream Anthropic sends (`message_start`, `content_block_start`,
 * `content_block_delta` with `text_delta` / `thinking_delta` /
 * `signature_delta` / `input_json_delta` pieces, `content_block_stop`,
 * `message_delta` with the stop reason and output tokens, `message_stop`)
 * when the client asked to stream. Tool input is scripted as raw text so a
 * stream can carry arguments split at any character, or cut off by a
 * `max_tokens` stop. Every request body is recorded; a request with nothing
 * scripted gets a 500, so an unexpected extra model call fails loudly.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export type ScriptedBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  /** `input` is the raw JSON text of the arguments (streamed as `input_json_delta` pieces). */
  | { type: "tool_use"; id: string; name: string; input: string };

export interface ScriptedMessage {
  kind: "message";
  content: ScriptedBlock[];
  stop_reason: string;
  /** Sent as is (`input_tokens`, `output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`). */
  usage?: Record<string, unknown>;
  /** Characters per streamed delta (default 7), so arguments arrive split mid-token. */
  pieceLength?: number;
}

export interface ScriptedFailure {
  kind: "failure";
  status: number;
  message: string;
}

export type AnthropicScripted = ScriptedMessage | ScriptedFailure;

export interface AnthropicRequest {
  path: string;
  apiKey: string | undefined;
  body: Record<string, unknown>;
}

export interface FakeAnthropic {
  /** What `anthropicApiUrl` (`ANTHROPIC_BASE_URL`) takes. */
  baseUrl: string;
  requests: AnthropicRequest[];
  enqueue(...responses: AnthropicScripted[]): void;
  pending(): number;
  close(): Promise<void>;
}

const DEFAULT_USAGE = { input_tokens: 100, output_tokens: 10 };

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const queue: AnthropicScripted[] = [];
  const requests: AnthropicRequest[] = [];
  let received = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received += 1;
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      } catch {
        body = {};
      }
      const apiKey = request.headers["x-api-key"];
      requests.push({ path: request.url ?? "", apiKey: typeof apiKey === "string" ? apiKey : undefined, body });
      const next = queue.shift();
      if (request.method !== "POST" || request.url !== "/v1/messages" || next === undefined)
        return sendError(response, 500, `unscripted request ${request.method} ${request.url}`);
      if (next.kind === "failure") return sendError(response, next.status, next.message);
      const id = `msg_fake_${received}`;
      if (body["stream"] === true) sendStream(response, id, next);
      else sendMessage(response, id, next);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...responses) => queue.push(...responses),
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function sendError(response: http.ServerResponse, status: number, message: string): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ type: "error", error: { type: "api_error", message } }));
}

/** The non-streamed body, written by hand so a tool's input is the scripted text itself. */
function sendMessage(response: http.ServerResponse, id: string, message: ScriptedMessage): void {
  const blocks = message.content.map((block) =>
    block.type === "tool_use"
      ? `{"type":"tool_use","id":${JSON.stringify(block.id)},"name":${JSON.stringify(block.name)},"input":${block.input}}`
      : JSON.stringify(block),
  );
  const head = { id, type: "message", role: "assistant", model: "fake-claude" };
  const body =
    `${JSON.stringify(head).slice(0, -1)},"content":[${blocks.join(",")}],` +
    `"stop_reason":${JSON.stringify(message.stop_reason)},"stop_sequence":null,` +
    `"usage":${JSON.stringify(message.usage ?? DEFAULT_USAGE)}}`;
  response.writeHead(200, { "content-type": "application/json" });
  response.end(body);
}

function pieces(text: string, length: number): string[] {
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += length) parts.push(text.slice(start, start + length));
  return parts;
}

/** The same message as Anthropic streams it. */
function sendStream(response: http.ServerResponse, id: string, message: ScriptedMessage): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const send = (event: Record<string, unknown>) =>
    response.write(`event: ${String(event["type"])}\ndata: ${JSON.stringify(event)}\n\n`);
  const usage = { ...DEFAULT_USAGE, ...message.usage };
  const length = message.pieceLength ?? 7;
  send({
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model: "fake-claude",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      send({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
      for (const text of pieces(block.text, length))
        send({ type: "content_block_delta", index, delta: { type: "text_delta", text } });
    } else if (block.type === "thinking") {
      send({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } });
      for (const thinking of pieces(block.thinking, length))
        send({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } });
      send({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } });
    } else {
      send({
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      for (const partial_json of pieces(block.input, length))
        send({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } });
    }
    send({ type: "content_block_stop", index });
  });
  send({
    type: "message_delta",
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  send({ type: "message_stop" });
  response.end();
}
