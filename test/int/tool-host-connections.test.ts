/**
 * Bounded connections, host side (issue 3): 1,000 calls for two tenants
 * through the ToolHost to caseops over Streamable HTTP, each with a freshly
 * minted task token, open one MCP session per tenant and no more. Counted on
 * the server (its session log and stats), not on the client.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { loadConfig, parseConfig } from "../../src/policy/config.js";
import type { CaseopsServerHandle } from "../../tools/caseops/server.js";
import { countingCaseops } from "./support/caseops.js";
import { principal, settings } from "./support/agent.js";

const SECRET = new Uint8Array(randomBytes(32));
const CALLS = 1_000;
const CONCURRENCY = 10;

let caseops: CaseopsServerHandle;
let tools: ToolHost;
/** Every session the server opened, by tenant, in order. */
let opened: string[] = [];

beforeAll(async () => {
  ({ server: caseops, opened } = await countingCaseops(SECRET));
  const shipped = await loadConfig(settings.configPath);
  const contracts = Object.fromEntries(
    Object.entries(shipped.tools).filter(([, contract]) => contract.server === "caseops"),
  );
  const config = parseConfig(
    JSON.stringify({
      servers: { caseops: { transport: "http", url: caseops.url, audience: "caseops" } },
      tools: contracts,
    }),
    "test config",
  );
  tools = await connectTools(config, { secret: SECRET, ttlSeconds: 120 });
}, 60_000);

afterAll(async () => {
  await tools?.close();
  await caseops?.close();
});

describe("ToolHost connections to a Streamable HTTP server", () => {
  it("serves 1,000 calls for two tenants over one session per tenant", async () => {
    // Start-up listed the tools over a host session and ended it.
    expect(opened).toEqual(["warrant-host"]);
    expect(caseops.stats().sessions).toBe(0);

    const snapshot = tools.catalog().find((tool) => tool.name === "get_case_snapshot");
    if (!snapshot) throw new Error("get_case_snapshot is not in the catalog");
    const callers = [
      { principal: await principal("dana"), case_id: "C-102", tenant: "acme" },
      { principal: await principal("gil"), case_id: "C-201", tenant: "globex" },
    ];
    const requestsBefore = caseops.stats().requests;
    let peakSessions = 0;
    const results: { ok: boolean; case_id: unknown; tenant: unknown; expected: string }[] = [];

    for (let start = 0; start < CALLS; start += CONCURRENCY) {
      const batch = Array.from({ length: Math.min(CONCURRENCY, CALLS - start) }, async (_, offset) => {
        const index = start + offset;
        const caller = callers[index % callers.length];
        if (!caller) throw new Error("no caller");
        const result = await tools.call(
          snapshot,
          { case_id: caller.case_id },
          { timeoutMs: 10_000, principal: caller.principal, threadId: `thread-${index}` },
        );
        const structured =
          result.ok && typeof result.structured === "object" && result.structured !== null
            ? (result.structured as Record<string, unknown>)
            : {};
        results.push({
          ok: result.ok,
          case_id: structured["case_id"],
          tenant: structured["tenant"],
          expected: caller.tenant,
        });
      });
      await Promise.all(batch);
      peakSessions = Math.max(peakSessions, caseops.stats().sessions);
    }

    expect(results).toHaveLength(CALLS);
    expect(results.filter((result) => !result.ok)).toEqual([]);
    // Each tenant only ever saw its own case.
    expect(results.every((result) => result.tenant === result.expected)).toBe(true);
    expect(new Set(results.map((result) => `${String(result.tenant)}:${String(result.case_id)}`))).toEqual(
      new Set(["acme:C-102", "globex:C-201"]),
    );
    // Bounded: one session per tenant for the whole load, plus the start-up listing.
    expect(peakSessions).toBeLessThanOrEqual(callers.length);
    expect(caseops.stats().sessions).toBe(callers.length);
    expect([...opened].sort()).toEqual(["acme", "globex", "warrant-host"]);
    expect(caseops.stats().requests - requestsBefore).toBeGreaterThanOrEqual(CALLS);

    // Closing the host ends its sessions on the server.
    await tools.close();
    expect(caseops.stats().sessions).toBe(0);
  }, 120_000);
});

describe("a session the server no longer knows", () => {
  it("is replaced by a fresh one without failing the call or the server", async () => {
    // Sessions idle for a second are closed by the server (swept every second).
    const { server, opened: sessionsOpened } = await countingCaseops(SECRET, { sessionIdleMs: 1_000 });
    const host = await connectTools(
      parseConfig(
        JSON.stringify({
          servers: { caseops: { transport: "http", url: server.url, audience: "caseops" } },
          tools: { get_case_snapshot: { server: "caseops", risk: "read" } },
        }),
        "test config",
      ),
      { secret: SECRET, ttlSeconds: 120 },
    );
    try {
      const snapshot = host.catalog().find((tool) => tool.name === "get_case_snapshot");
      if (!snapshot) throw new Error("get_case_snapshot is not in the catalog");
      const dana = { timeoutMs: 10_000, principal: await principal("dana"), threadId: "idle-thread" };
      expect(await host.call(snapshot, { case_id: "C-102" }, dana)).toMatchObject({ ok: true });
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(server.stats().sessions).toBe(0);
      expect(await host.call(snapshot, { case_id: "C-102" }, dana)).toMatchObject({ ok: true });
      expect(host.isHealthy("caseops")).toBe(true);
      // The tenant got exactly one new session; any host session (listing, a probe after the stream's 404) was ended.
      expect(sessionsOpened.filter((tenant) => tenant !== "warrant-host")).toEqual(["acme", "acme"]);
      expect(server.stats().sessions).toBe(1);
    } finally {
      await host.close();
      await server.close();
    }
  }, 30_000);
});
