/** `${NAME}` placeholders in server environments: the host's value, or no variable at all. */
import { describe, expect, it } from "vitest";
import { resolveEnvironment, withHostValues } from "../../src/mcp/host-values.js";
import type { WarrantConfig } from "../../src/policy/config.js";

describe("host values in server environments", () => {
  it("replaces a whole-value placeholder with the host's value", () => {
    expect(resolveEnvironment({ A: "${DATABASE_URL}", B: "plain" }, { DATABASE_URL: "postgres://h/db" })).toEqual({
      A: "postgres://h/db",
      B: "plain",
    });
  });

  it("drops the variable when the host has no value, and never passes an unknown name or the literal text", () => {
    expect(resolveEnvironment({ A: "${DATABASE_URL}" }, {})).toEqual({});
    expect(resolveEnvironment({ A: "${DATABASE_URL}" }, { DATABASE_URL: "" })).toEqual({});
    expect(resolveEnvironment({ A: "${OPENAI_API_KEY}" }, { DATABASE_URL: "postgres://h/db" })).toEqual({});
    // Only a whole value is a placeholder.
    expect(resolveEnvironment({ A: "x${DATABASE_URL}" }, { DATABASE_URL: "postgres://h/db" })).toEqual({
      A: "x${DATABASE_URL}",
    });
  });

  it("resolves stdio env and http launch env, leaving the rest of the config alone", () => {
    const config = {
      servers: {
        calendar: {
          transport: "stdio",
          command: "node",
          args: [],
          env: { URL: "${DATABASE_URL}" },
          optional: false,
          reconnect: { base_ms: 200, max_ms: 10_000 },
        },
        remote: {
          transport: "http",
          audience: "x",
          launch: { command: "node", args: [], env: { URL: "${DATABASE_URL}" } },
          optional: false,
          reconnect: { base_ms: 200, max_ms: 10_000 },
        },
      },
      tools: {},
    } as unknown as WarrantConfig;
    const resolved = withHostValues(config, { DATABASE_URL: "postgres://h/db" });
    expect(resolved.servers["calendar"]).toMatchObject({ env: { URL: "postgres://h/db" } });
    expect(resolved.servers["remote"]).toMatchObject({ launch: { env: { URL: "postgres://h/db" } } });
    expect(config.servers["calendar"]).toMatchObject({ env: { URL: "${DATABASE_URL}" } });
  });
});
