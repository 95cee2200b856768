/**
 * Quiz requests through the agent graph: the plan node reads the notes
 * server's course outline and quiz prompt as the principal, the rules planner
 * chooses notes from the outline, and every note is still read through
 * authorize/execute/ledger. Real notes MCP server, real Postgres (both
 * backends). Assertions are on ledger rows, citations, evidence and codes.
 */
import path from "node:path";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import { connectTools, type ToolHost } from "../../src/mcp/tool-host.js";
import { buildMessages } from "../../src/planners/model-prompt.js";
import type { PlannerInput } from "../../src/planners/planner.js";
import { createRulesPlanner, quizNotes } from "../../src/domains/rules-planner.js";
import { loadConfig } from "../../src/policy/config.js";
import type { State } from "../../src/state.js";
import { loadCorpus, type Corpus } from "../../tools/notes/corpus.js";
import { scriptedPlanner } from "../support/scripted-planner.js";
import { agentHarness, principal, settings } from "./support/agent.js";
import { backends, useBackend } from "./support/postgres.js";
import { courseContextOf } from "../../src/domains/notes/course-context.js";
import { useSandbox } from "../support/sandbox.js";

const QUIZ = "Make a quiz from my cs301 notes";

let tools: ToolHost;
let corpus: Corpus;
beforeAll(async () => {
  const config = await loadConfig(settings.configPath);
  const notes = config.servers["notes"];
  if (!notes) throw new Error("the shipped config has no notes server");
  // The notes server alone: quiz requests need nothing else.
  tools = fixture.add(
    await connectTools({
      ...config,
      servers: { notes },
      tools: Object.fromEntries(Object.entries(config.tools).filter(([, contract]) => contract.server === "notes")),
    }),
  );
  corpus = await loadCorpus(path.join(REPO_ROOT, "tools", "notes", "data", "notes.json"));
}, 60_000);
const fixture = useSandbox();

const releasedIds = (course: string) =>
  corpus.notes.filter((note) => note.course === course && note.released).map((note) => note.note_id);
const ledgerShape = (state: State) => state.ledger.map((row) => [row.tool, row.status]);

describe.each(backends)("quiz requests on $name Postgres", (backend) => {
  const opened = useBackend(backend);

  it("completes alice's quiz with cs301 citations, choosing the notes from the outline", async () => {
    const agent = agentHarness({ database: opened().database, tools, planner: createRulesPlanner() });
    const { threadId, state } = await agent.run("alice", QUIZ);
    expect(state.status).toBe("completed");
    expect(state.termination_reason?.code).toBe("final_answer");

    const context = courseContextOf(state.run?.context);
    expect(context?.course).toBe("cs301");
    expect(context?.unavailable).toBeNull();
    expect(context?.outline?.notes.map((note) => note.note_id)).toEqual(releasedIds("cs301"));
    expect(context?.guidance?.startsWith("Write 5 quiz question")).toBe(true);

    // The outline chose the notes: no search, one read per chosen note, each through the ledger.
    const chosen = quizNotes(context?.outline ?? { title: "", notes: [] }, QUIZ, "cs301");
    expect(chosen).toHaveLength(3);
    expect(ledgerShape(state)).toEqual(chosen.map(() => ["read_note", "succeeded"]));
    expect((await opened().database.ledger.list(threadId)).map((row) => row.status)).toEqual([
      "succeeded",
      "succeeded",
      "succeeded",
    ]);
    expect(state.result?.citations.map((citation) => citation.ref)).toEqual(chosen.map((id) => `${id}@1`));
    for (const citation of state.result?.citations ?? []) expect(citation.source_id.startsWith("cs301/")).toBe(true);
    expect(state.usage).toMatchObject({ model_calls: 2, tool_calls: 3 });
  });

  it("reads the notes on the topic the request names", async () => {
    const agent = agentHarness({ database: opened().database, tools, planner: createRulesPlanner() });
    const { state } = await agent.run("alice", "Make a quiz on attention from my cs301 notes");
    expect(state.status).toBe("completed");
    expect(state.result?.citations.map((citation) => citation.ref)).toEqual([
      "cs301.scaled-dot-product-attention@1",
      "cs301.self-attention@1",
      "cs301.multi-head-attention@1",
    ]);
  });

  it("gives bob, who is not enrolled in cs301, no cs301 content and an abstention", async () => {
    const agent = agentHarness({ database: opened().database, tools, planner: createRulesPlanner() });
    const { state } = await agent.run("bob", QUIZ);
    expect(state.status).toBe("abstained");
    expect(state.result).toMatchObject({ abstained: true, citations: [] });
    expect(courseContextOf(state.run?.context)).toEqual({
      course: "cs301",
      outline: null,
      guidance: null,
      unavailable: "access_denied",
    });
    expect(state.ledger).toEqual([]);
    expect(state.evidence).toEqual([]);
    // Nothing but bob's own words mentions cs301, and no cs301 note title reaches him.
    const replies = JSON.stringify(
      state.messages.filter((message) => !HumanMessage.isInstance(message)).map((message) => message.content),
    );
    expect(replies).not.toMatch(/cs301/);
    for (const note of corpus.notes.filter((entry) => entry.course === "cs301"))
      expect(replies).not.toContain(note.title);
  });

  it("hands a model planner the outline as data and the quiz prompt as guidance", async () => {
    const planner = scriptedPlanner([{ type: "final", answer: "no quiz today", citations: [], abstained: true }]);
    const agent = agentHarness({ database: opened().database, tools, planner });
    await agent.run("alice", "Write a quiz with questions from cs301");
    planner.assertDone();
    const input = planner.inputs[0] as PlannerInput;
    expect(courseContextOf(input.context)?.outline?.notes.map((note) => note.note_id)).toEqual(releasedIds("cs301"));
    const system = buildMessages(input)[0];
    expect(SystemMessage.isInstance(system)).toBe(true);
    const text = String(system?.content);
    expect(text).toContain('{"note_id":"cs301.self-attention","title":"Self-attention"}');
    expect(text).toMatch(/<guidance>\nWrite 5 quiz question/);
    expect(text).not.toContain("cs301.exam-2-solutions");
  });
});

describe("the host reads outlines as the principal", () => {
  const options = async (userId: string) => ({
    timeoutMs: 10_000,
    principal: await principal(userId),
    threadId: "outline-test",
  });

  it("never lists an unreleased note to a student; staff see it marked unreleased", async () => {
    const student = await tools.readResource("notes", "notes://courses/cs301/outline", await options("alice"));
    if (!student.ok) throw new Error(`outline refused: ${student.code}`);
    const studentIds = (student.structured as { notes: { note_id: string }[] }).notes.map((note) => note.note_id);
    expect(studentIds).toEqual(releasedIds("cs301"));
    expect(studentIds).not.toContain("cs301.exam-2-solutions");

    const staff = await tools.readResource("notes", "notes://courses/cs301/outline", await options("sam"));
    if (!staff.ok) throw new Error(`outline refused: ${staff.code}`);
    expect((staff.structured as { notes: { note_id: string; released: boolean }[] }).notes).toContainEqual(
      expect.objectContaining({ note_id: "cs301.exam-2-solutions", released: false }),
    );
  });

  it("gets the same access_denied for bob's cs301 as for a course that does not exist", async () => {
    const forbidden = await tools.readResource("notes", "notes://courses/cs301/outline", await options("bob"));
    const missing = await tools.readResource("notes", "notes://courses/zz999/outline", await options("bob"));
    expect(forbidden).toMatchObject({ ok: false, code: "access_denied" });
    expect(missing).toEqual(forbidden);
    const prompt = await tools.getPrompt("notes", "quiz_from_notes", { course_id: "cs301" }, await options("bob"));
    expect(prompt).toMatchObject({ ok: false, code: "access_denied" });
  });
});
