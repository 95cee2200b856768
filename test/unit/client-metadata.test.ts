/**
 * The one rule for client metadata (issue 36) and the run labels a request's
 * `config` may set: each key the server owns is dropped, whatever its case;
 * tags, run name and metadata are bounded with typed errors.
 */
import { describe, expect, it } from "vitest";
import { clientMetadata, isReservedMetadataKey } from "../../src/server/request-fields.js";
import { parseBody } from "../../src/server/request-fields.js";
import { clientRunConfig, RunCreate } from "../../src/server/runs/requests.js";
import { labelAttributes } from "../../src/trace/otel.js";

const THREAD = "00000000-0000-4000-8000-000000000001";
const RESERVED = [
  "owner",
  "tenant",
  "user_id",
  "graph_id",
  "assistant_id",
  "thread_id",
  "run_id",
  "cron_id",
  "langgraph_auth_user",
  "langgraph_auth_user_id",
  "langgraph_auth_permissions",
  "langgraph_auth_anything",
  "warrant_run_bound",
  "warrant_x",
  "Owner",
  "USER_ID",
  "LangGraph_Auth_User_Id",
  "WARRANT_owner",
];

const request = (config: unknown) =>
  parseBody(RunCreate, { assistant_id: "agent", input: { messages: [{ role: "user", content: "hi" }] }, config });

const refusal = (run: () => unknown): [string, string] | "ok" => {
  try {
    run();
    return "ok";
  } catch (error) {
    return [(error as { code: string }).code, String((error as Error).message).split(":")[0] ?? ""];
  }
};

describe("clientMetadata", () => {
  it.each(RESERVED)("drops %s, keeps the rest", (key) => {
    expect(isReservedMetadataKey(key)).toBe(true);
    expect(clientMetadata({ [key]: "alice", label: "x" })).toEqual({ label: "x" });
  });

  it("keeps keys that only resemble the server's", () => {
    for (const key of ["owners", "my_owner", "langgraph_step", "label", "tenant_name", "warrant"])
      expect(clientMetadata({ [key]: 1 })).toEqual({ [key]: 1 });
    expect(clientMetadata(null)).toEqual({});
    expect(clientMetadata(undefined)).toEqual({});
  });
});

describe("clientRunConfig labels", () => {
  it("honours tags, run_name and metadata (after the rule), and what RemoteGraph sends by default", () => {
    expect(
      clientRunConfig(
        request({
          tags: ["a", "b", "a"],
          run_name: "nightly",
          metadata: { label: "x", owner: "alice", thread_id: THREAD },
          configurable: {},
          recursion_limit: 30,
        }),
        THREAD,
      ),
    ).toEqual({ tags: ["a", "b"], runName: "nightly", metadata: { label: "x" }, recursionLimit: 30 });
    expect(clientRunConfig(request({ tags: [], metadata: { thread_id: THREAD }, configurable: {} }), THREAD)).toEqual({
      tags: [],
      metadata: {},
    });
    expect(clientRunConfig(request({ tags: null, run_name: null, metadata: null }), THREAD)).toEqual({});
  });

  it("bounds them with invalid_request naming the field, and refuses other keys as unsupported", () => {
    const cases: [unknown, [string, string]][] = [
      [{ tags: "a" }, ["invalid_request", "config.tags"]],
      [{ tags: Array.from({ length: 33 }, (_, index) => String(index)) }, ["invalid_request", "config.tags"]],
      [{ tags: ["ok", ""] }, ["invalid_request", "config.tags.1"]],
      [{ tags: ["x".repeat(129)] }, ["invalid_request", "config.tags.0"]],
      [{ tags: ["a\u0000"] }, ["invalid_request", "config.tags.0"]],
      [{ tags: ["a\u200b"] }, ["invalid_request", "config.tags.0"]],
      [{ run_name: "" }, ["invalid_request", "config.run_name"]],
      [{ run_name: "x".repeat(257) }, ["invalid_request", "config.run_name"]],
      [{ run_name: "a\tb" }, ["invalid_request", "config.run_name"]],
      [{ metadata: "x" }, ["invalid_request", "config.metadata"]],
      [{ metadata: { "": 1 } }, ["invalid_request", "config.metadata."]],
      [{ callbacks: [] }, ["unsupported", "config.callbacks"]],
      [{ configurable: { user_id: "bob" } }, ["unsupported", "config.configurable.user_id"]],
    ];
    for (const [config, expected] of cases)
      expect({ config, got: refusal(() => clientRunConfig(request(config), THREAD)) }).toEqual({
        config,
        got: expected,
      });
  });
});

describe("labelAttributes", () => {
  it("puts the labels on the run span in LangSmith's OpenTelemetry names", () => {
    expect(labelAttributes(undefined)).toEqual({});
    expect(
      labelAttributes({ tags: ["a"], run_name: "n", metadata: { label: "x", week: 3, ok: true, nested: { a: 1 } } }),
    ).toEqual({
      "langsmith.span.tags": ["a"],
      "langsmith.trace.name": "n",
      "langsmith.metadata.label": "x",
      "langsmith.metadata.week": 3,
      "langsmith.metadata.ok": true,
      "langsmith.metadata.nested": '{"a":1}',
    });
    expect(labelAttributes({ tags: [], run_name: null, metadata: {} })).toEqual({});
  });
});
