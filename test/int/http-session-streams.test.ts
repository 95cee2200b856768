/**
 * The optional GET event stream (issue 11, item 6): a server that answers it
 * with 404 offers no server-initiated stream; that is not a lost session. A
 * call in flight on that session must return its result, the server must
 * stay healthy, and the tool must have run once. Only a 404 answering a
 * request that carried our session id means the session is gone (then the
 * call is carried once on a fresh session, as before).
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { HealthEvent } from "../../src/mcp/health.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { parseConfig } from "../../src/policy/config.js";
import { principal } from "./support/agent.js";
import { startNoStreamServer, type NoStreamServer } from "./support/no-stream-server.js";

const SECRET = new Uint8Array(randomBytes(32));

let server: NoStreamServer | undefined;
let host: ToolHost | undefined;

afterEach(async () => {
  await host?.close();
  await server?.close();
  host = undefined;
  server = undefined;
});

async function connect(url: string, events: HealthEvent[]): Promise<ToolHost> {
  const config = parseConfig(
    JSON.stringify({
      servers: { adder: { transport: "http", url, audience: "adder" } },
      tools: { slow_add: { server: "adder", risk: "read" } },
    }),
    "test config",
  );
  return connectTools(config, { secret: SECRET, ttlSeconds: 120 }, { onHealth: (event) => events.push(event) });
}

describe("a Streamable HTTP server without a GET event stream", () => {
  it("keeps the session: a call in flight while the GET is refused with 404 returns its result", async () => {
    server = await startNoStreamServer({ delayMs: 400 });
    const events: HealthEvent[] = [];
    host = await connect(server.url, events);
    const tool = host.catalog().find((candidate) => candidate.name === "slow_add");
    if (!tool) throw new Error("slow_add is not in the catalog");
    const caller = { timeoutMs: 10_000, principal: await principal("dana"), threadId: "no-stream" };

    const result = await host.call(tool, { a: 2, b: 3 }, caller);

    expect(result).toMatchObject({ ok: true, structured: { sum: 5 } });
    // The session's GET was refused while the call ran, and nothing treated that as a lost server.
    expect(server.getsRefused).toBeGreaterThanOrEqual(1);
    expect(server.runs).toBe(1);
    expect(host.isHealthy("adder")).toBe(true);
    expect(events.filter((event) => event.type === "unhealthy")).toEqual([]);
    // The same session serves the next call: no session was replaced.
    expect(await host.call(tool, { a: 1, b: 1 }, caller)).toMatchObject({ ok: true, structured: { sum: 2 } });
    expect(server.unknownSessions).toBe(0);
    expect(server.runs).toBe(2);
  }, 30_000);

  it("still replaces a session the server forgot (a 404 to a POST carrying our session id), once, without failing the call", async () => {
    server = await startNoStreamServer({ delayMs: 10 });
    const events: HealthEvent[] = [];
    host = await connect(server.url, events);
    const tool = host.catalog().find((candidate) => candidate.name === "slow_add");
    if (!tool) throw new Error("slow_add is not in the catalog");
    const caller = { timeoutMs: 10_000, principal: await principal("dana"), threadId: "forgotten" };

    expect(await host.call(tool, { a: 2, b: 2 }, caller)).toMatchObject({ ok: true, structured: { sum: 4 } });
    server.forgetSessions();
    expect(await host.call(tool, { a: 3, b: 3 }, caller)).toMatchObject({ ok: true, structured: { sum: 6 } });

    expect(server.unknownSessions).toBe(1);
    // The refused request was not processed; the retry ran the tool once.
    expect(server.runs).toBe(2);
    expect(host.isHealthy("adder")).toBe(true);
  }, 30_000);
});
