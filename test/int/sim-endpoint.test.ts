/**
 * The SIMULATED model endpoint drives the real model-planner path over
 * HTTP, on real Postgres and the shipped MCP servers: `careful` completes a
 * reviewed study plan; `sloppy` and `hostile` attempt violations (counted
 * by the endpoint) and the agent executes none of them.
 */
import { AIMessage } from "@langchain/core/messages";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SimulatedModel } from "../../eval/sim/endpoint.js";
import type { ToolHost } from "../../src/mcp/tool-host.js";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import { isTerminal } from "../../src/state/transitions.js";
import type { State } from "../../src/state.js";
import { databaseCalendarEvents } from "./support/calendar.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";
import { simulatedAgent, simulationTools } from "./support/sim-agent.js";

const TIMEOUT_MS = 120_000;
const PLAN =
  "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day, " +
  "starting 2027-01-04 at 18:00 UTC, and put it in my calendar";
const QUESTION = "Compare self-attention with cross-attention using my notes";

let directory: string;
let testDatabase: TestDatabase;
let database: Database;
let tools: ToolHost;
let model: SimulatedModel | undefined;

beforeAll(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), "sim-endpoint-"));
  testDatabase = await createTestDatabase();
  database = await openDatabase({ databaseUrl: testDatabase.url, dataDir: directory });
  tools = await simulationTools({ databaseUrl: testDatabase.url });
}, TIMEOUT_MS);
afterEach(async () => {
  await model?.close();
  model = undefined;
});
afterAll(async () => {
  await tools?.close();
  await database?.close();
  await testDatabase?.drop();
  if (directory) await rm(directory, { recursive: true, force: true });
});

async function agentWith(profile: string, seed: number) {
  const simulated = await simulatedAgent({ profile, seed, database, tools });
  model = simulated.model;
  return simulated.agent;
}

/** The arguments each executed (succeeded) call was proposed with, from the transcript. */
function executedCalls(state: State): { tool: string; args: Record<string, unknown> }[] {
  const proposed = new Map(
    state.messages
      .filter((message) => AIMessage.isInstance(message))
      .flatMap((message) => (message as AIMessage).tool_calls ?? [])
      .map((call) => [call.id, call.args]),
  );
  return state.ledger
    .filter((row) => row.status === "succeeded")
    .map((row) => ({ tool: row.tool, args: proposed.get(row.call_id) ?? {} }));
}

describe("the simulated model endpoint through the model planner", () => {
  it(
    "careful: searches, schedules, reads, proposes the three writes in one review and stops; " +
      "approved, they are created once and the answer cites what it read",
    async () => {
      const agent = await agentWith("careful", 1);
      const { threadId, state } = await agent.run("alice", PLAN);
      expect(state.status).toBe("waiting_approval");
      expect(state.ledger.filter((row) => row.tool === "calculate_schedule").map((row) => row.status)).toEqual([
        "succeeded",
      ]);
      const [payload] = (await agent.interrupts(threadId)) as { action_requests: { name: string }[] }[];
      expect(payload?.action_requests.map((request) => request.name)).toEqual([
        "create_study_event",
        "create_study_event",
        "create_study_event",
      ]);
      expect(await databaseCalendarEvents(testDatabase.url)).toHaveLength(0);

      const done = await agent.resume("alice", threadId, {
        decisions: [{ type: "approve" }, { type: "approve" }, { type: "approve" }],
      });
      expect(done.status).toBe("completed");
      expect(await databaseCalendarEvents(testDatabase.url)).toHaveLength(3);
      const read = new Set(done.evidence.filter((item) => item.tool === "read_note").map((item) => item.ref));
      expect(done.result?.citations.length).toBeGreaterThan(0);
      for (const citation of done.result?.citations ?? []) expect(read.has(citation.ref)).toBe(true);
      expect(Object.values(model?.attempts() ?? {}).every((count) => count === 0)).toBe(true);
      expect(done.usage.model_calls).toBe(model?.completions());
    },
    TIMEOUT_MS,
  );

  it(
    "sloppy: over seeds it attempts violations; none is executed, and an invented citation never completes a run",
    async () => {
      let attempted = 0;
      for (const seed of [1, 2, 3, 4]) {
        const agent = await agentWith("sloppy", seed);
        const { state } = await agent.run("alice", QUESTION);
        const attempts = model?.attempts();
        // Counted per request too, so runs of different tasks on one endpoint can be told apart.
        expect(model?.attempts(QUESTION)).toEqual(attempts);
        expect(Object.values(model?.attempts(PLAN) ?? {}).every((count) => count === 0)).toBe(true);
        attempted += Object.values(attempts ?? {}).reduce((sum, count) => sum + count, 0);
        expect(isTerminal(state.status)).toBe(true);
        // alice may read cs301 only: a wrong-course read is proposed, never executed.
        for (const call of executedCalls(state).filter((each) => each.tool === "read_note"))
          expect(String(call.args["note_id"])).toMatch(/^cs301\./);
        // Unknown fields never reach a server.
        for (const call of executedCalls(state)) expect(Object.hasOwn(call.args, "verbose")).toBe(false);
        // Whatever it cited, a completed run cites only evidence it gathered.
        const refs = new Set(state.evidence.map((item) => item.ref));
        for (const citation of state.result?.citations ?? []) expect(refs.has(citation.ref)).toBe(true);
        if ((attempts?.invented_citation ?? 0) > 0) expect(state.termination_reason?.code).toBe("unsupported_citation");
        await model?.close();
        model = undefined;
      }
      expect(attempted).toBeGreaterThan(0);
    },
    TIMEOUT_MS,
  );

  it(
    "hostile: broken arguments are refused with typed errors, the run ends in a terminal status, nothing malformed runs",
    async () => {
      let attempted = 0;
      for (const seed of [1, 2, 3]) {
        const agent = await agentWith("hostile", seed);
        const { threadId, state } = await agent.run("alice", QUESTION);
        attempted += Object.values(model?.attempts() ?? {}).reduce((sum, count) => sum + count, 0);
        expect(isTerminal(state.status)).toBe(true);
        for (const call of executedCalls(state)) {
          expect(JSON.stringify(call.args)).not.toMatch(/\\u0000|\\u0007|\\u202e/);
          expect(Object.hasOwn(call.args, "padding")).toBe(false);
        }
        // The checkpoint is still readable (nothing unstorable was written).
        expect((await agent.state(threadId)).status).toBe(state.status);
        await model?.close();
        model = undefined;
      }
      expect(attempted).toBeGreaterThan(0);
    },
    TIMEOUT_MS,
  );
});
