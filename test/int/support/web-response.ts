/**
 * Answers a node:http response with a fetch `Response` (what the v2 SDK's `createMcpHandler` returns), streaming its
 * body as it comes: a 2026-07-28 `subscriptions/listen` answer is an event stream that stays open.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { createMcpHandler } from "@modelcontextprotocol/server";

export async function sendWebResponse(response: ServerResponse, answer: Response): Promise<void> {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    headers[name] = value;
  });
  response.writeHead(answer.status, headers);
  const reader = answer.body?.getReader();
  response.on("close", () => void reader?.cancel().catch(() => undefined));
  for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader?.read())
    response.write(chunk.value);
  response.end();
}

export type AuthedRequest = IncomingMessage & { auth?: AuthInfo; body: unknown };

/** An express request (body parsed, bearer verified) answered by the v2 handler. */
export async function serveModern(
  handler: ReturnType<typeof createMcpHandler>,
  request: AuthedRequest,
  response: ServerResponse,
) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") headers.set(name, value);
  // The body is parsed (express.json) and serialized again: its length may differ.
  headers.delete("content-length");
  const answer = await handler.fetch(
    new Request(`http://127.0.0.1${request.url ?? "/"}`, {
      method: "POST",
      headers,
      body: JSON.stringify(request.body),
    }),
    request.auth ? { authInfo: request.auth } : {},
  );
  await sendWebResponse(response, answer);
}

/** The bearer a tool handler of either SDK was called with (the v2 SDK's under `http`). */
export function authOf(extra: unknown): AuthInfo | undefined {
  const context = extra as { http?: { authInfo?: AuthInfo }; authInfo?: AuthInfo };
  return context.http?.authInfo ?? context.authInfo;
}
