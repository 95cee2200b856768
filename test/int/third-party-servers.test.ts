/**
 * Third-party MCP servers added through the config file only (issue 3):
 * `@modelcontextprotocol/server-filesystem` on a temp folder and
 * `@modelcontextprotocol/server-everything`, from
 * `examples/third-party.config.json`, through the real agent graph on real
 * Postgres. Read tools run under their contracts; the write needs review and
 * runs once; uncontracted tools are neither offered nor run.
 */
import { mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ToolMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import type { Database } from "../../src/stores/open-database.js";
import type { InterruptPayload } from "../../src/policy/resume.js";
import { parseConfig } from "../../src/policy/config.js";
import type { PlannerInput } from "../../src/planners/planner.js";
import type { State } from "../../src/state.js";
import { calls, proposal, scriptedPlanner } from "../support/scripted-planner.js";
import { agentHarness } from "./support/agent.js";
import { openTestDatabase } from "./support/postgres.js";

const EXAMPLE = path.join(REPO_ROOT, "examples", "third-party.config.json");
const EXAMPLE_FOLDER = "examples/files";
const CONTRACTED = ["echo", "get_sum", "list_directory", "read_text_file", "write_file"];

let folder: string;
let tools: ToolHost;
let database: Database;

/** The example config with its folder argument pointed at this test's temp folder (nothing else changed). */
async function exampleConfigFor(target: string) {
  const raw = JSON.parse(await readFile(EXAMPLE, "utf8")) as { servers: { files: { args: string[] } } };
  const args = raw.servers.files.args;
  expect(args.filter((arg) => arg === EXAMPLE_FOLDER)).toHaveLength(1);
  raw.servers.files.args = args.map((arg) => (arg === EXAMPLE_FOLDER ? target : arg));
  return parseConfig(JSON.stringify(raw), "third-party test config");
}

function errorCodes(state: State): string[] {
  return state.messages
    .filter((message): message is ToolMessage => ToolMessage.isInstance(message) && message.status === "error")
    .map((message) => (JSON.parse(String(message.content)) as { error: { code: string } }).error.code);
}

function toolText(state: State, callId: string): string {
  const message = state.messages.find(
    (item): item is ToolMessage => ToolMessage.isInstance(item) && item.tool_call_id === callId,
  );
  return String(message?.content ?? "");
}

beforeAll(async () => {
  folder = await realpath(await mkdtemp(path.join(os.tmpdir(), "warrant-third-party-")));
  await writeFile(path.join(folder, "notes.txt"), "The exam is on Friday.\n");
  await writeFile(path.join(folder, "keep.txt"), "do not move me\n");
  tools = await connectTools(await exampleConfigFor(folder));
  database = await openTestDatabase();
}, 60_000);

afterAll(async () => {
  await tools?.close();
  await database?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe("third-party MCP servers from config only", () => {
  it("offers exactly the contracted tools, with the servers' own schemas and nothing host-injected", () => {
    expect(tools.isHealthy("files")).toBe(true);
    expect(tools.isHealthy("everything")).toBe(true);
    expect(
      tools
        .catalog()
        .map((tool) => tool.name)
        .sort(),
    ).toEqual(CONTRACTED);
    // Listed by the servers but uncontracted: known, hidden.
    for (const hidden of ["move_file", "edit_file", "read_multiple_files", "get-env", "toggle-simulated-logging"]) {
      expect(tools.isListed(hidden), hidden).toBe(true);
      expect(
        tools.catalog().some((tool) => tool.remote_name === hidden),
        hidden,
      ).toBe(false);
    }
    const write = tools.catalog().find((tool) => tool.name === "write_file");
    expect(write?.model_schema).toMatchObject({
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"],
      additionalProperties: false,
    });
    expect(Object.keys((write?.model_schema["properties"] as Record<string, unknown>) ?? {}).sort()).toEqual([
      "content",
      "path",
    ]);
    expect(tools.catalog().find((tool) => tool.name === "get_sum")?.remote_name).toBe("get-sum");
  });

  it("runs reads under contracts, denies hidden tools, and writes one file only after review", async () => {
    const notes = path.join(folder, "notes.txt");
    const output = path.join(folder, "summary.txt");
    const seen: PlannerInput[] = [];
    const listing = proposal("list_directory", { path: folder });
    const read = proposal("read_text_file", { path: notes });
    const echo = proposal("echo", { message: "hello from warrant" });
    const sum = proposal("get_sum", { a: 2, b: 3 });
    const move = proposal("move_file", {
      source: path.join(folder, "keep.txt"),
      destination: path.join(folder, "moved.txt"),
    });
    const leak = proposal("get-env", {});
    const write = proposal("write_file", { path: output, content: "Exam: Friday." });
    const planner = scriptedPlanner([
      (input) => {
        seen.push(input);
        return calls(listing, read, echo, sum, move, leak);
      },
      (input) => {
        seen.push(input);
        return calls(write);
      },
      { type: "final", answer: "Wrote the summary.", citations: [], abstained: false },
    ]);
    const agent = agentHarness({ database, tools, planner });
    const before = (await readdir(folder)).sort();

    const { threadId, state } = await agent.run("alice", "Summarize my notes folder into summary.txt");
    // The planner was offered the contracted tools only, and never a host-injected argument.
    expect(seen[0]?.tools.map((tool) => tool.name).sort()).toEqual(CONTRACTED);
    const visible = JSON.stringify(seen.map((input) => input.tools));
    for (const hidden of ["idempotency_key", "user_id", "tenant", "move_file", "get-env"])
      expect(visible).not.toContain(hidden);

    // Reads ran under their contracts; hidden tools were denied before any call.
    expect(state.status).toBe("waiting_approval");
    expect(state.ledger.map((row) => [row.tool, row.status]).sort()).toEqual([
      ["echo", "succeeded"],
      ["get_sum", "succeeded"],
      ["list_directory", "succeeded"],
      ["read_text_file", "succeeded"],
    ]);
    expect(errorCodes(state)).toEqual(["tool_not_permitted", "tool_not_permitted"]);
    expect(toolText(state, listing.call_id)).toContain("[FILE] notes.txt");
    expect(toolText(state, read.call_id)).toContain("The exam is on Friday.");
    expect(toolText(state, echo.call_id)).toContain("Echo: hello from warrant");
    expect(toolText(state, sum.call_id)).toContain("is 5");
    expect(await readFile(path.join(folder, "keep.txt"), "utf8")).toBe("do not move me\n");

    // The write waits for review: the interrupt names it with the model's arguments only.
    const [payload] = (await agent.interrupts(threadId)) as InterruptPayload[];
    expect(payload?.action_requests).toEqual([
      { name: "write_file", args: { path: output, content: "Exam: Friday." }, description: expect.any(String) },
    ]);
    expect(payload?.review_configs).toEqual([
      { action_name: "write_file", allowed_decisions: ["approve", "edit", "reject"], rule: "owner_or_reviewer" },
    ]);
    expect(payload?.approvals).toEqual([
      {
        action_id: expect.any(String),
        fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        version: 1,
        requested_at: expect.any(String),
        expires_at: expect.any(String),
      },
    ]);
    expect((await readdir(folder)).sort()).toEqual(before);

    const finished = await agent.resume("alice", threadId, {
      decisions: [{ type: "approve", action_id: payload?.approvals[0]?.action_id }],
    });
    planner.assertDone();
    expect(finished.status).toBe("completed");
    const writes = finished.ledger.filter((row) => row.tool === "write_file");
    expect(writes).toEqual([
      expect.objectContaining({
        call_id: write.call_id,
        attempt: 1,
        risk: "write_reversible",
        status: "succeeded",
        idempotency_key: null,
      }),
    ]);
    // Exactly one file was written, with exactly the approved content.
    expect((await readdir(folder)).sort()).toEqual([...before, "summary.txt"].sort());
    expect(await readFile(output, "utf8")).toBe("Exam: Friday.");
    const durable = await database.ledger.list(threadId);
    expect(durable.filter((row) => row.tool === "write_file").map((row) => row.status)).toEqual(["succeeded"]);
  }, 60_000);

  it("denies an uncontracted write proposed anyway and never runs it", async () => {
    const edit = proposal("edit_file", {
      path: path.join(folder, "keep.txt"),
      edits: [{ oldText: "do not", newText: "please" }],
    });
    const planner = scriptedPlanner([
      calls(edit),
      { type: "final", answer: "could not", citations: [], abstained: true },
    ]);
    const { state } = await agentHarness({ database, tools, planner }).run("alice", "edit keep.txt");
    planner.assertDone();
    expect(state.decisions).toMatchObject([{ type: "deny", code: "tool_not_permitted" }]);
    expect(state.ledger).toEqual([]);
    expect(await readFile(path.join(folder, "keep.txt"), "utf8")).toBe("do not move me\n");
  });
});
