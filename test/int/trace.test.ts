/**
 * One run's timeline from Postgres alone (issue 11, item 4): a recorded run
 * (two parallel reads, a reviewed write alice approves, a denied proposal,
 * the final answer) on a real Postgres server and the real calendar MCP
 * server, read back by `readRunTrace` and by `npm run trace`, and exported
 * as OpenTelemetry spans to an OTLP/HTTP receiver started by the test.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAgent } from "../../graphs/agent.js";
import { createRuntime } from "../../src/bootstrap.js";
import { REPO_ROOT } from "../../src/env.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import { loadConfig } from "../../src/policy/config.js";
import { callSpanIdOf, traceIdOf } from "../../src/trace-ids.js";
import { readRunTrace } from "../../src/trace/read-trace.js";
import type { RunTrace, TraceEntry } from "../../src/trace/trace-entries.js";
import { settings } from "./support/agent.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { waitFor } from "./support/processes.js";
import { BOOKING_REQUEST, startTestServer } from "./support/server.js";
import { calendarConfig, EVENT, recordedRun, REQUEST } from "./support/recorded-run.js";

const TIMEOUT_MS = 90_000;
const run = promisify(execFile);

/** OTLP/JSON spans as a receiver sees them. */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number };
}

/** A small OTLP/HTTP receiver: collects every span POSTed to /v1/traces. */
async function otlpReceiver(): Promise<{ url: string; spans: OtlpSpan[]; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.url === "/v1/traces" && request.headers["content-type"]?.includes("json")) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const resource of body.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function attribute(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((item) => item.key === key)?.value;
  if (!value) return undefined;
  if ("intValue" in value) return Number(value["intValue"]);
  if ("arrayValue" in value)
    return ((value["arrayValue"] as { values?: { stringValue?: string }[] }).values ?? []).map(
      (item) => item.stringValue,
    );
  return Object.values(value)[0];
}

const ofKind = <K extends TraceEntry["kind"]>(trace: RunTrace, kind: K) =>
  trace.timeline.filter((entry): entry is Extract<TraceEntry, { kind: K }> => entry.kind === kind);

describe("one run's timeline", () => {
  let test: TestDatabase;
  let database: Database;
  let tools: ToolHost;
  let directory: string;
  let recorded: { threadId: string; runId: string };

  beforeAll(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), "trace-"));
    test = await createTestDatabase();
    database = await openDatabase({ databaseUrl: test.url, dataDir: directory });
    tools = await connectTools(calendarConfig(await loadConfig(settings.configPath), directory));
    recorded = await recordedRun(database, tools);
  }, TIMEOUT_MS);
  afterAll(async () => {
    await tools?.close();
    await database?.close();
    await test?.drop();
    await rm(directory, { recursive: true, force: true });
  });

  const trace = (...args: string[]) =>
    run(process.execPath, ["--import", "tsx", "src/cli/trace.ts", ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: test.url, ...extraEnv },
      timeout: 60_000,
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code?: unknown; stdout?: string; stderr?: string }) => ({
        code: typeof error.code === "number" ? error.code : -1,
        stdout: error.stdout ?? "",
        stderr: error.stderr ?? "",
      }),
    );
  let extraEnv: Record<string, string> = {};

  const read = async (runId: string) => {
    const graph = buildAgent(createRuntime(settings, { database, tools }).host).compile({
      checkpointer: database.saver,
    });
    return readRunTrace(database, async () => graph, runId);
  };

  it(
    "orders the request, plans, decisions with their checks, the approval, every attempt and the end",
    async () => {
      const result = await read(recorded.runId);
      if (!result) throw new Error("no trace");
      expect(result).toMatchObject({
        run_id: recorded.runId,
        thread_id: recorded.threadId,
        owner: "alice",
        request: REQUEST,
        status: "completed",
      });
      expect(result.termination?.code).toBe("final_answer");
      expect(result.usage).toMatchObject({ model_calls: 2, tool_calls: 3 });

      const plans = ofKind(result, "plan");
      expect(plans.map((plan) => [plan.turn, plan.verdict])).toEqual([
        [1, "tool_calls"],
        [2, "final"],
      ]);
      expect(plans[0]?.proposed.map((call) => call.tool)).toEqual([
        "list_events",
        "list_events",
        "create_study_event",
        "delete_everything",
      ]);
      expect(plans[0]?.offered).toContain("create_study_event");

      const decisions = ofKind(result, "decision");
      const first = decisions.filter((decision) => decision.node === "authorize");
      expect(first.map((decision) => [decision.tool, decision.outcome, decision.check])).toEqual([
        ["list_events", "allow", null],
        ["list_events", "allow", null],
        ["create_study_event", "review", "review"],
        ["delete_everything", "deny", "offered"],
      ]);
      expect(first[3]?.code).toBe("unknown_tool");
      // human_review's news is the reviewed call only.
      expect(
        decisions
          .filter((decision) => decision.node === "human_review")
          .map((decision) => [decision.tool, decision.outcome]),
      ).toEqual([["create_study_event", "allow"]]);

      expect(ofKind(result, "approval")).toEqual([
        expect.objectContaining({ tool: "create_study_event", outcome: "approve", approver: "alice", version: 1 }),
      ]);
      const attempts = ofKind(result, "execution");
      expect(attempts.map((attempt) => [attempt.tool, attempt.status, attempt.attempt])).toEqual([
        ["list_events", "succeeded", 1],
        ["list_events", "succeeded", 1],
        ["create_study_event", "succeeded", 1],
      ]);
      for (const attempt of attempts) expect(attempt.elapsed_ms).toBeGreaterThanOrEqual(0);
      expect(attempts[2]?.approved_by).toBe("alice");

      // In time order: the approval comes after the review decision and before the write ran.
      const kinds = result.timeline.map((entry) => `${entry.kind}:${"tool" in entry ? entry.tool : ""}`);
      expect(kinds.indexOf("approval:create_study_event")).toBeLessThan(kinds.indexOf("execution:create_study_event"));
      expect(kinds[0]).toBe("plan:");
      expect(result.nodes[0]?.node).toBe("plan");
      expect(result.nodes.map((node) => node.node)).toContain("human_review");
      expect(result.nodes.at(-1)?.node).toBe("observe");
    },
    TIMEOUT_MS,
  );

  it(
    "`npm run trace -- RUN_ID --json` prints the same trace from the database alone; text names each check",
    async () => {
      const json = await trace(recorded.runId, "--json");
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual(await read(recorded.runId));

      const text = await trace(recorded.runId);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(
        /decision {4}deny {3}delete_everything \[[^\]]+\] by authorize: offered → unknown_tool/,
      );
      expect(text.stdout).toMatch(/approval {4}approve create_study_event \[[^\]]+\] by alice, request version 1/);
      expect(text.stdout).toMatch(/termination: final_answer/);
    },
    TIMEOUT_MS,
  );

  it(
    "answers an unknown run with not_found (exit 1) and a malformed one with a usage error (exit 2)",
    async () => {
      const unknown = await trace("00000000-0000-0000-0000-000000000000");
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^warrant: not_found:/);
      for (const bad of [["a", "b"], ["run\u0007id"]]) expect((await trace(...bad)).code).toBe(2);
    },
    TIMEOUT_MS,
  );

  it(
    "exports the run as OpenTelemetry spans: a run span, a span per node, model and tool calls with GenAI attributes",
    async () => {
      const receiver = await otlpReceiver();
      try {
        extraEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
        const exported = await trace(recorded.runId, "--otlp");
        expect(exported.code).toBe(0);
        const spans = receiver.spans;
        expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([traceIdOf(recorded.runId)]));
        const [root, ...others] = spans.filter((span) => span.name === "invoke_agent agent");
        expect(others).toEqual([]);
        if (!root) throw new Error("no run span");
        expect(root.parentSpanId ?? "").toBe("");
        expect(attribute(root, "warrant.run_id")).toBe(recorded.runId);
        expect(attribute(root, "gen_ai.operation.name")).toBe("invoke_agent");
        expect(attribute(root, "warrant.termination_reason")).toBe("final_answer");

        const nodes = spans.filter(
          (span) => span.parentSpanId === root.spanId && attribute(span, "warrant.node") !== undefined,
        );
        expect(nodes.map((span) => span.name)).toEqual(
          expect.arrayContaining(["plan", "authorize", "human_review", "execute", "observe"]),
        );
        const chats = spans.filter((span) => attribute(span, "gen_ai.operation.name") === "chat");
        expect(chats).toHaveLength(2);
        for (const chat of chats) expect(nodes.find((node) => node.spanId === chat.parentSpanId)?.name).toBe("plan");

        const tools = spans.filter((span) => attribute(span, "gen_ai.operation.name") === "execute_tool");
        expect(tools.map((span) => attribute(span, "gen_ai.tool.name")).sort()).toEqual([
          "create_study_event",
          "list_events",
          "list_events",
        ]);
        for (const tool of tools) expect(nodes.find((node) => node.spanId === tool.parentSpanId)?.name).toBe("execute");
        // Each attempt's span has the id its traceparent named to the MCP server (src/trace-ids.ts).
        for (const tool of tools)
          expect(tool.spanId).toBe(
            callSpanIdOf(String(attribute(tool, "gen_ai.tool.call.id")), Number(attribute(tool, "warrant.attempt"))),
          );
        const write = tools.find((span) => attribute(span, "gen_ai.tool.name") === "create_study_event");
        expect(JSON.parse(String(attribute(write!, "gen_ai.tool.call.arguments")))).toEqual(EVENT);
        for (const span of spans)
          expect(BigInt(span.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(span.startTimeUnixNano));
      } finally {
        extraEnv = {};
        await receiver.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    "refuses --otlp without an endpoint",
    async () => {
      const refused = await trace(recorded.runId, "--otlp");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/config_invalid/);
    },
    TIMEOUT_MS,
  );
});

describe("the same run id from the API", () => {
  it(
    "traces a run started and resumed through the API by either API run id or the run id in its values; " +
      "the server exports each finished run over OTLP",
    async () => {
      const receiver = await otlpReceiver();
      const server = await startTestServer({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
      try {
        const alice = await server.client("alice");
        const thread = await alice.threads.create();
        await alice.runs.wait(thread.thread_id, "agent", {
          input: { messages: [{ role: "user", content: BOOKING_REQUEST }] },
        });
        const values = (await alice.runs.wait(thread.thread_id, "agent", {
          command: { resume: { decisions: [{ type: "approve" }] } },
        })) as { run: { run_id: string } };
        const apiRuns = (await alice.runs.list(thread.thread_id)).map((run) => run.run_id);
        expect(apiRuns).toHaveLength(2);
        const cli = (runId: string) =>
          run(process.execPath, ["--import", "tsx", "src/cli/trace.ts", runId, "--json"], {
            cwd: REPO_ROOT,
            env: { ...process.env, DATABASE_URL: server.databaseUrl, WARRANT_DATA_DIR: server.dataDir },
            timeout: 60_000,
          }).then(({ stdout }) => JSON.parse(stdout) as RunTrace);
        const byResume = await cli(apiRuns[0]!);
        // Each id leads to the one Warrant run: its id is the one in the values and the start's API run id.
        expect(byResume.run_id).toBe(values.run.run_id);
        expect([...byResume.api_runs].sort()).toEqual([...apiRuns].sort());
        expect(byResume.graph_id).toBe("agent");
        expect(ofKind(byResume, "approval")).toEqual([
          expect.objectContaining({ outcome: "approve", approver: "alice" }),
        ]);
        expect(ofKind(byResume, "execution").map((attempt) => [attempt.tool, attempt.status])).toEqual([
          ["create_study_event", "succeeded"],
        ]);
        expect(byResume.termination?.code).toBe("final_answer");
        expect((await cli(values.run.run_id)).timeline).toEqual(byResume.timeline);

        // Both API runs ended (the first at its review, the second at the answer): each was exported under the run's one trace id.
        await waitFor(
          () =>
            receiver.spans.some(
              (span) =>
                span.name === "invoke_agent agent" && attribute(span, "warrant.termination_reason") === "final_answer",
            ),
          "the finished run's spans",
          30_000,
        );
        const roots = receiver.spans.filter((span) => span.name === "invoke_agent agent");
        expect(new Set(roots.map((span) => span.traceId))).toEqual(new Set([traceIdOf(values.run.run_id)]));
        expect(receiver.spans.some((span) => attribute(span, "gen_ai.tool.name") === "create_study_event")).toBe(true);
      } finally {
        await server.close();
        delete process.env["OTEL_EXPORTER_OTLP_ENDPOINT"];
        await receiver.close();
      }
    },
    TIMEOUT_MS,
  );
});
