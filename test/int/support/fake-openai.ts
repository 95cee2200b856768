/**
 * A fake OpenAI-compatible Chat Completions server for tests (node:http on
 * 127.0.0.1, port 0). It plays scripted completions in order, as one JSON
 * body or as SSE chunks depending on whether the client asked to stream,
 * and records every request body. A request with nothing scripted for it
 * gets a 500, so an unexpected extra model call fails loudly. The wire
 * format is the simulated model's (`eval/sim/wire.ts`).
 *
 * Used in-process (model-planner.test.ts) and by server child processes
 * through `OPENAI_BASE_URL` (server-process.test.ts).
 */
import { COMPLETIONS_PATH, serveCompletions, type WireCompletion, type WireToolCall } from "../../../eval/sim/wire.js";

export type ScriptedToolCall = WireToolCall;

/** A completion the fake renders either as one JSON body or as SSE chunks. */
export interface ScriptedCompletion extends WireCompletion {
  kind: "completion";
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

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: Scripted[] = [];
  const requests: RecordedRequest[] = [];
  const server = await serveCompletions(
    (request) => {
      requests.push({ path: request.path, authorization: request.authorization, body: request.body });
      const next = queue.shift();
      if (request.method !== "POST" || request.path !== COMPLETIONS_PATH || next === undefined) {
        return { kind: "failure", status: 500, message: `unscripted request ${request.method} ${request.path}` };
      }
      if (next.kind !== "completion") return next;
      const { kind: _kind, ...completion } = next;
      return { kind: "completion", completion };
    },
    { model: "fake-model", idPrefix: "chatcmpl-fake-" },
  );
  return {
    baseUrl: server.baseUrl,
    requests,
    enqueue: (...responses) => queue.push(...responses),
    pending: () => queue.length,
    close: () => server.close(),
  };
}
