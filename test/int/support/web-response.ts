/**
 * Answers a node:http response with a fetch `Response` (what the v2 SDK's `createMcpHandler` returns), streaming its
 * body as it comes: a 2026-07-28 `subscriptions/listen` answer is an event stream that stays open.
 */
import type { ServerResponse } from "node:http";

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
