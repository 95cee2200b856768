/**
 * The ids a run's trace is known by outside Warrant, derived so that anyone
 * holding Warrant's own ids can compute them and no table has to store them:
 * the OTLP trace id of a run, the span id of one attempt of a tool call, and
 * the W3C `traceparent` the host sends an MCP server with that attempt (in
 * the request's `_meta`), so the server's own spans nest under the tool
 * call's span when the run is exported (`trace/otel.ts`).
 */
import { createHash } from "node:crypto";

/** The OTLP trace id for a run: the first 128 bits of SHA-256 of its run id. */
export function traceIdOf(runId: string): string {
  return createHash("sha256").update(`warrant-run|${runId}`).digest("hex").slice(0, 32);
}

/** The span id of one attempt of a tool call: the first 64 bits of SHA-256 of the call id and attempt. */
export function callSpanIdOf(callId: string, attempt: number): string {
  return createHash("sha256").update(`warrant-call|${callId}|${attempt}`).digest("hex").slice(0, 16);
}

/** W3C Trace Context `traceparent` (version 00, sampled) naming that attempt's span as the parent. */
export function traceparentOf(runId: string, callId: string, attempt: number): string {
  return `00-${traceIdOf(runId)}-${callSpanIdOf(callId, attempt)}-01`;
}
