/**
 * A scripted Gemini API server for tests (node:http on 127.0.0.1, port 0):
 * `POST /v1beta/models/<model>:generateContent`, answered with one JSON
 * body in Gemini's shape (`candidates[0].content.parts` with `text` and
 * `functionCall` parts, `finishReason`, `usageMetadata` sent as scripted).
 * Every request body is recorded; a request with nothing scripted gets a
 * 500, so an unexpected extra model call fails loudly.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export type GeminiPart =
  | { text: string; thought?: boolean }
  | { functionCall: { name: string; args: Record<string, unknown> } };

export interface GeminiScripted {
  parts: GeminiPart[];
  finishReason: string;
  /** Sent as is (`promptTokenCount`, `candidatesTokenCount`, `cachedContentTokenCount`…). */
  usageMetadata?: Record<string, unknown>;
}

export interface GeminiRequest {
  path: string;
  apiKey: string | undefined;
  body: Record<string, unknown>;
}

export interface FakeGemini {
  /** What `GOOGLE_GENAI_BASE_URL` takes. */
  baseUrl: string;
  requests: GeminiRequest[];
  enqueue(...responses: GeminiScripted[]): void;
  pending(): number;
  close(): Promise<void>;
}

export async function startFakeGemini(): Promise<FakeGemini> {
  const queue: GeminiScripted[] = [];
  const requests: GeminiRequest[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      } catch {
        body = {};
      }
      const apiKey = request.headers["x-goog-api-key"];
      requests.push({ path: request.url ?? "", apiKey: typeof apiKey === "string" ? apiKey : undefined, body });
      const next = queue.shift();
      if (request.method !== "POST" || !/^\/v1beta\/models\/[^/]+:generateContent$/.test(request.url ?? "") || !next) {
        response.writeHead(500, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { code: 500, message: `unscripted request ${request.url}` } }));
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          candidates: [{ content: { role: "model", parts: next.parts }, finishReason: next.finishReason, index: 0 }],
          usageMetadata: next.usageMetadata ?? {
            promptTokenCount: 100,
            candidatesTokenCount: 10,
            totalTokenCount: 110,
          },
          modelVersion: "fake-gemini",
        }),
      );
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
