/**
 * Connecting servers, alone (src/mcp/servers.ts), with fake connections: a
 * server's listing reaches the listings on connect and on list_changed; a
 * required server that fails stops start-up (all closed); an optional one
 * starts unhealthy; relist refuses an unknown server; close shuts each down.
 */
import { describe, expect, it } from "vitest";
import type { ListedTool } from "../../src/mcp/catalog.js";
import type { ConnectionEvents, ServerConnection } from "../../src/mcp/connection.js";
import type { HealthEvent } from "../../src/mcp/health.js";
import { createServerSet } from "../../src/mcp/servers.js";
import { parseConfig } from "../../src/policy/config.js";

const servers = parseConfig(
  JSON.stringify({
    servers: {
      one: { transport: "http", url: "http://127.0.0.1:1/mcp", audience: "one" },
      two: { transport: "http", url: "http://127.0.0.1:2/mcp", audience: "two", optional: true },
    },
    tools: {},
  }),
).servers;

interface Fake {
  connection: ServerConnection;
  events?: ConnectionEvents;
  shutdowns: number;
}

function fakes(failing: ReadonlySet<string>, tools: ListedTool[] = []) {
  const made = new Map<string, Fake>();
  const factory = (name: string, _server: unknown, events: ConnectionEvents): ServerConnection => {
    const fake: Fake = {
      events,
      shutdowns: 0,
      connection: {
        open: async () => {
          if (failing.has(name)) throw new Error(`${name} refused`);
          return { capabilities: { tools: {} }, info: { name, version: "1" }, tools };
        },
        session: async () => ({ meta: undefined, run: async () => undefined as never }),
        relist: async () => tools,
        probe: async () => undefined,
        shutdown: async () => {
          fake.shutdowns += 1;
        },
      },
    };
    made.set(name, fake);
    return fake.connection;
  };
  return { made, factory };
}

const tool: ListedTool = { name: "t", inputSchema: { type: "object" } };

describe("server set", () => {
  it("adopts each server's listing on connect and on list_changed", async () => {
    const adopted: string[] = [];
    const { made, factory } = fakes(new Set(), [tool]);
    const set = createServerSet({
      servers,
      connectionFor: factory,
      listings: { adopt: async (server, info) => void adopted.push(`${server}@${info.name}`) },
      onHealth: () => undefined,
    });
    await set.start();
    expect(adopted.sort()).toEqual(["one@one", "two@two"]);
    expect(set.get("one")?.supervisor.healthy).toBe(true);
    expect(set.capabilities("one")).toEqual({ tools: {} });
    made.get("one")?.events?.toolsChanged();
    await set.relist("one");
    expect(adopted.filter((entry) => entry === "one@one").length).toBeGreaterThanOrEqual(2);
    await set.close();
  });

  it("a failing required server stops start-up and closes every connection", async () => {
    const { made, factory } = fakes(new Set(["one"]));
    const set = createServerSet({
      servers,
      connectionFor: factory,
      listings: { adopt: async () => undefined },
      onHealth: () => undefined,
    });
    await expect(set.start()).rejects.toMatchObject({ code: "mcp_start_failed" });
    expect(made.get("one")?.shutdowns).toBeGreaterThan(0);
    expect(made.get("two")?.shutdowns).toBeGreaterThan(0);
  });

  it("a failing optional server starts unhealthy; relist refuses it and unknown servers", async () => {
    const events: HealthEvent[] = [];
    const { factory } = fakes(new Set(["two"]));
    const set = createServerSet({
      servers,
      connectionFor: factory,
      listings: { adopt: async () => undefined },
      onHealth: (event) => events.push(event),
      random: () => 0,
    });
    await set.start();
    expect(set.get("two")?.supervisor.healthy).toBe(false);
    expect(events).toContainEqual(expect.objectContaining({ server: "two", type: "unhealthy" }));
    await expect(set.relist("two")).rejects.toThrow(/not connected/);
    await expect(set.relist("nope")).rejects.toThrow(/not connected/);
    expect(set.get("toString")).toBeUndefined();
    await set.close();
  });
});
