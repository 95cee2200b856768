/**
 * A vitest setup file: with WARRANT_RECORD_TRAFFIC=<file>, every request a
 * test sends to a Warrant test server (support/server.ts notes their origins)
 * is appended to the file as one JSON line, {method, path, status, request,
 * response}, for the OpenAPI traffic test. Without the variable it does nothing.
 */
import { appendFileSync } from "node:fs";

const file = process.env["WARRANT_RECORD_TRAFFIC"];
const ORIGINS = Symbol.for("warrant.test.apiOrigins");
type Global = typeof globalThis & { [ORIGINS]?: Set<string> };

const origins = (): Set<string> => {
  const global = globalThis as Global;
  global[ORIGINS] ??= new Set();
  return global[ORIGINS];
};

/** Marks a test server's origin as one whose traffic is recorded. */
export function noteApiServer(url: string): void {
  origins().add(new URL(url).origin);
}

const json = (text: string | undefined): unknown => {
  if (text === undefined || text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { unparsed: text.slice(0, 200) };
  }
};

const INSTALLED = Symbol.for("warrant.test.recorderInstalled");
if (file && !(globalThis as Record<symbol, unknown>)[INSTALLED]) {
  (globalThis as Record<symbol, unknown>)[INSTALLED] = true;
  const original = globalThis.fetch;
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (!origins().has(url.origin)) return original(input, init);
    const sent = request.body ? await request.clone().text() : undefined;
    const response = await original(input, init);
    const type = response.headers.get("content-type") ?? "";
    const record = (body: unknown) =>
      appendFileSync(
        file,
        `${JSON.stringify({
          method: request.method.toLowerCase(),
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          status: response.status,
          type: type.split(";")[0] ?? "",
          request: json(sent),
          response: body,
        })}\n`,
      );
    // A stream is recorded by its status and type only (reading it would hold it open).
    if (type.startsWith("text/event-stream") || !type.includes("json")) record(null);
    else
      void response
        .clone()
        .text()
        .then((text) => record(json(text)))
        .catch(() => undefined);
    return response;
  };
}
