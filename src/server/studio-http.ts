/**
 * The HTTP app `npm run dev` mounts in front of the LangGraph API's routes
 * (`langgraph.json` `http.app`). It adds no route; it repairs one answer.
 *
 * The API (`@langchain/langgraph-api` 1.5) serialises a failed run's error
 * twice on `runs.wait`: the worker publishes `{error, message}`, and `wait`
 * serialises that plain object again, so a client reads
 * `{"__error__":{"error":"Error","message":"{\"error\":\"ConfigError\",\"message\":\"…\"}"}}`:
 * JSON inside JSON. This middleware unwraps it to
 * `{"__error__":{"error":"ConfigError","message":"…"}}`, leaving the
 * keep-alive newlines the API streams while the run goes on untouched.
 */
import { Hono } from "hono";

/** The `runs.wait` routes, thread-bound and stateless. */
const WAIT_PATH = /\/runs\/wait\/?$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An error the API serialised a second time: `{error: "Error", message: "<JSON of {error, message}>"}`. */
function innerError(error: unknown): { error: string; message: string } | undefined {
  if (!isRecord(error) || typeof error["message"] !== "string") return undefined;
  try {
    const inner: unknown = JSON.parse(error["message"]);
    if (isRecord(inner) && typeof inner["error"] === "string" && typeof inner["message"] === "string")
      return { error: inner["error"], message: inner["message"] };
  } catch {
    // A message that is not JSON is a sentence already.
  }
  return undefined;
}

/** A `runs.wait` body with a double-encoded `__error__` unwrapped; any other body unchanged. */
export function unwrapWaitBody(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  if (!isRecord(parsed)) return body;
  const inner = innerError(parsed["__error__"]);
  return inner ? JSON.stringify({ ...parsed, __error__: inner }) : body;
}

/** Passes keep-alive whitespace through as it comes; holds the rest and unwraps it at the end. */
function unwrapStream(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let held = "";
  return new TransformStream({
    transform(chunk, controller) {
      const text = decoder.decode(chunk, { stream: true });
      if (held === "" && text.trim() === "") controller.enqueue(chunk);
      else held += text;
    },
    flush(controller) {
      held += decoder.decode();
      if (held !== "") controller.enqueue(encoder.encode(unwrapWaitBody(held)));
    },
  });
}

/** What `langgraph.json` `http.app` loads. */
export const app = new Hono();

app.use("*", async (c, next) => {
  await next();
  if (c.req.method !== "POST" || !WAIT_PATH.test(c.req.path) || c.res.body === null) return;
  const { status, statusText, headers } = c.res;
  c.res = new Response(c.res.body.pipeThrough(unwrapStream()), { status, statusText, headers });
});
