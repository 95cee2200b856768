/**
 * W3C trace context to MCP servers: a tool call attempt carries
 * `traceparent` in its request's `_meta` (a real stdio server echoes it),
 * naming the run's trace and the attempt's span, the ids the OTLP export
 * gives the run and that attempt's `execute_tool` span (src/trace-ids.ts), so
 * the server's spans nest under it. A call outside a run carries none.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTools, type CallOptions, type ToolHost } from "../../src/mcp/tool-host.js";
import { parseConfig } from "../../src/policy/config.js";
import { callSpanIdOf, traceIdOf, traceparentOf } from "../../src/trace-ids.js";
import { principal } from "./support/agent.js";

let tools: ToolHost;
let alice: CallOptions;

beforeAll(async () => {
  const config = parseConfig(
    JSON.stringify({
      servers: {
        meta: { transport: "stdio", command: "node", args: ["--import", "tsx", "test/int/support/meta-server.ts"] },
      },
      tools: { echo_meta: { server: "meta", risk: "read" } },
    }),
    "traceparent test config",
  );
  tools = await connectTools(config, undefined, { onHealth: () => undefined });
  alice = { timeoutMs: 10_000, principal: await principal("alice"), threadId: "traceparent-thread" };
}, 60_000);

afterAll(async () => {
  await tools?.close();
});

async function echoed(options: CallOptions): Promise<{ traceparent: string | null; user_id: unknown }> {
  const tool = tools.catalog().find((entry) => entry.name === "echo_meta") ?? expect.fail("echo_meta not listed");
  const result = await tools.call(tool, {}, options);
  if (!result.ok) throw new Error(`echo_meta failed: ${result.code}`);
  return JSON.parse(result.text ?? "{}") as { traceparent: string | null; user_id: unknown };
}

describe("traceparent in a tool call's _meta", () => {
  it("names the run's trace and the attempt's span, and a retry's attempt gets a span of its own", async () => {
    const runId = "0b7c7a3e-5a7e-4a36-9a57-0f3b2f6f8d11";
    const first = await echoed({ ...alice, record: { call_id: "call_1", run_id: runId, attempt: 1 } });
    const second = await echoed({ ...alice, record: { call_id: "call_1", run_id: runId, attempt: 2 } });
    expect(first.traceparent).toBe(traceparentOf(runId, "call_1", 1));
    expect(first.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(first.traceparent?.split("-")[1]).toBe(traceIdOf(runId));
    expect(first.traceparent?.split("-")[2]).toBe(callSpanIdOf("call_1", 1));
    expect(second.traceparent?.split("-")[2]).toBe(callSpanIdOf("call_1", 2));
    expect(second.traceparent).not.toBe(first.traceparent);
    // The call's _meta carries the trace context only.
    expect(first.user_id).toBeNull();
  });

  it("sends none for a call that is not an attempt of a run's call", async () => {
    expect((await echoed(alice)).traceparent).toBeNull();
  });
});
