/**
 * The fixed workflow's code-owned pieces, without I/O: rerank, the ending
 * branches, the extractive quote, citation validation against the retrieved
 * set, routing, and that each step writes only the plan node's fields.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { END, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { buildWorkflow } from "../../graphs/workflow.js";
import type { Evidence } from "../../src/state/evidence.js";
import { FIELD_OWNERS, NODES, type NodeName, type State } from "../../src/state.js";
import { failureEnding } from "../../src/workflow/branches.js";
import { extractiveAnswer, quoteOf } from "../../src/workflow/extractive.js";
import { cannotFind, notesQuestion } from "../../src/domains/notes/question.js";
import { rerank } from "../../src/workflow/rerank.js";
import { workflowRequest } from "../../src/workflow/request.js";
import { afterStep, firstStep, nextStep, STEPS } from "../../src/workflow/route.js";
import { makeValidateNode } from "../../src/workflow/validate.js";
import { memoryHost, memoryTools } from "../support/memory-host.js";
import { scriptedPlanner } from "../support/scripted-planner.js";

function passage(noteId: string, title: string, excerpt: string, callId = `call_${noteId}`): Evidence {
  return {
    ref: `${noteId}@1`,
    source_id: `cs301/${noteId}`,
    item_id: noteId,
    title,
    excerpt,
    version: "1",
    tool: "read_note",
    call_id: callId,
  };
}

/** A transcript since the request: the read calls and their answers. */
function readTranscript(reads: { callId: string; ok: boolean }[]) {
  return [
    new HumanMessage("compare attention"),
    new AIMessage({
      content: "",
      tool_calls: reads.map((read) => ({ id: read.callId, name: "read_note", args: {}, type: "tool_call" as const })),
    }),
    ...reads.map(
      (read) =>
        new ToolMessage({
          tool_call_id: read.callId,
          name: "read_note",
          content: read.ok ? "{}" : '{"error":{"code":"tool_timeout","message":"slow"}}',
          ...(read.ok ? {} : { status: "error" as const }),
        }),
    ),
  ];
}

/** A question as rerank takes it: the notes question a request reads as, and the notes it names. */
const asked = (request: string, named: string[] = []) => ({ ...notesQuestion(request), named });

describe("rerank", () => {
  const passages = [
    passage("cs301.bm25", "BM25", "A ranking function for retrieval."),
    passage(
      "cs301.self-attention",
      "Self-attention",
      "Self-attention relates every position of one sequence to every other.",
    ),
    passage(
      "cs301.cross-attention",
      "Cross-attention",
      "Cross-attention lets queries from one sequence attend to another sequence; unlike self-attention.",
    ),
  ];

  it("orders by shared content words, drops passages sharing none, keeps the best few", () => {
    expect(rerank(passages, asked("self-attention cross-attention")).map((item) => item.item_id)).toEqual([
      "cs301.cross-attention",
      "cs301.self-attention",
    ]);
    expect(rerank(passages, asked("self-attention cross-attention"), 1).map((item) => item.item_id)).toEqual([
      "cs301.cross-attention",
    ]);
    expect(rerank(passages, asked("normalization"))).toEqual([]);
  });

  it("puts notes the question names first, even without a shared word", () => {
    expect(rerank(passages, asked("self-attention", ["cs301.bm25"])).map((item) => item.item_id)[0]).toBe("cs301.bm25");
  });

  it("is empty for no passages", () => {
    expect(rerank([], asked("anything"))).toEqual([]);
  });
});

describe("ending branches", () => {
  const read = (code?: string) => ({
    tool: "read_note",
    ok: code === undefined,
    structured: {},
    args: { note_id: "cs301.x" },
    ...(code ? { code } : {}),
  });

  it("ends as a refusal on access_denied, whatever else succeeded", () => {
    expect(failureEnding([read(), read("access_denied")])).toMatchObject({
      type: "final",
      abstained: true,
      citations: [],
    });
  });

  it("stops with tool_failure on a failure that outlived its retries", () => {
    expect(failureEnding([read("tool_timeout")])).toMatchObject({
      type: "stop",
      code: "tool_failure",
      detail: expect.stringMatching(/^tool_timeout: read_note \(cs301\.x\)/),
    });
  });

  it("lets successes through", () => {
    expect(failureEnding([read(), read()])).toBeUndefined();
    expect(failureEnding([])).toBeUndefined();
  });
});

describe("extractive answer", () => {
  it("quotes whole first sentences verbatim, bounded, and cites each passage", () => {
    const long = `${"Attention weighs values by query-key similarity. ".repeat(12)}`;
    const quote = quoteOf(long);
    expect(quote.length).toBeLessThanOrEqual(321);
    expect(long).toContain(quote.replace(/…$/, ""));
    const answer = extractiveAnswer([passage("cs301.a", "A", "First. Second. Third.")]);
    expect(answer).toMatchObject({ citations: ["cs301.a@1"], abstained: false });
    expect(answer.answer).toContain('(cs301.a): "First. Second. Third."');
  });
});

describe("validate", () => {
  const validate = makeValidateNode();
  const stateWith = (
    citations: string[],
    evidence: Evidence[],
    messages = readTranscript([{ callId: "call_a", ok: true }]),
  ) =>
    ({ verdict: { type: "final", answer: "x", citations, abstained: false }, evidence, messages }) as unknown as State;

  it("accepts citations of this run's reads", async () => {
    expect(await validate(stateWith(["cs301.a@1"], [passage("cs301.a", "A", "a", "call_a")]))).toEqual({});
  });

  it("stops with unsupported_citation for a ref the thread has seen but this run did not retrieve", async () => {
    const earlier = passage("cs301.b", "B", "b", "call_from_an_earlier_run");
    const update = await validate(
      stateWith(["cs301.a@1", "cs301.b@1"], [passage("cs301.a", "A", "a", "call_a"), earlier]),
    );
    expect(update).toEqual({
      verdict: { type: "stop", code: "unsupported_citation", detail: expect.stringContaining("cs301.b@1") },
    });
  });

  it("counts every successful call of a claim's run as retrieved, and still no earlier run's", async () => {
    const claim = [
      new HumanMessage("Investigate claim C-101: are its documents complete?"),
      new AIMessage({
        content: "",
        tool_calls: [{ id: "call_case", name: "get_case_snapshot", args: {}, type: "tool_call" as const }],
      }),
      new ToolMessage({ tool_call_id: "call_case", name: "get_case_snapshot", content: "{}" }),
    ];
    const item = (ref: string, callId: string): Evidence => ({
      ref,
      source_id: "case:C-101",
      item_id: "C-101",
      excerpt: "",
      version: "v4",
      tool: "get_case_snapshot",
      call_id: callId,
    });
    expect(await validate(stateWith(["case:C-101@v4"], [item("case:C-101@v4", "call_case")], claim))).toEqual({});
    expect(
      await validate(stateWith(["case:C-101@v3"], [item("case:C-101@v3", "call_from_an_earlier_run")], claim)),
    ).toMatchObject({ verdict: { type: "stop", code: "unsupported_citation" } });
  });

  it("does not count a failed read as retrieved", async () => {
    const messages = readTranscript([{ callId: "call_a", ok: false }]);
    expect(await validate(stateWith(["cs301.a@1"], [passage("cs301.a", "A", "a", "call_a")], messages))).toMatchObject({
      verdict: { type: "stop" },
    });
  });
});

describe("routing", () => {
  const base = {
    status: "observing",
    proposals: [],
    verdict: null,
    messages: [new HumanMessage("What is BM25?")],
  } as unknown as State;

  it("sends study requests to the study step and questions to retrieve", () => {
    expect(firstStep(base)).toBe(STEPS.retrieve);
    expect(
      firstStep({ ...base, messages: [new HumanMessage("Divide 180 minutes between bm25 and mvcc using my notes")] }),
    ).toBe(STEPS.study);
    expect(workflowRequest("What does cs301.self-attention say?")).toMatchObject({
      kind: "notes",
      named: ["cs301.self-attention"],
    });
  });

  it("sends a claim to the case step, turn after turn, as the rules planner's CaseOps branch", () => {
    const claim = { ...base, messages: [new HumanMessage("Investigate claim C-102: are its documents complete?")] };
    expect(workflowRequest("Investigate claim C-102: are its documents complete?")).toEqual({
      kind: "case",
      caseId: "C-102",
    });
    expect(firstStep(claim)).toBe(STEPS.case);
    expect(nextStep(claim)).toBe(STEPS.case);
  });

  it("reads after the search, generates after the reads, and ends on a terminal status", () => {
    expect(nextStep(base)).toBe(STEPS.read);
    expect(nextStep({ ...base, messages: readTranscript([{ callId: "call_a", ok: true }]) })).toBe(STEPS.generate);
    expect(nextStep({ ...base, status: "completed" })).toBe(END);
  });

  it("validates answers, sends calls to authorize and other endings to observe", () => {
    expect(afterStep({ ...base, verdict: cannotFind(notesQuestion("What is BM25?")) })).toBe(STEPS.validate);
    expect(afterStep({ ...base, proposals: [{ call_id: "c", name: "read_note", raw_arguments: "{}" }] })).toBe(
      NODES.authorize,
    );
    expect(afterStep({ ...base, verdict: { type: "stop", code: "tool_failure", detail: "x" } })).toBe(NODES.observe);
  });
});

describe("field ownership in the workflow", () => {
  it("each step writes only the plan node's fields, the control plane only its own, and no planner is asked", async () => {
    const planner = scriptedPlanner([]);
    const tools = memoryTools(() => ({ ok: true, text: "{}", structured: {} }));
    const written = new Map<NodeName, Set<string>>();
    const graph = buildWorkflow(memoryHost({ planner, tools }), (name, node) => {
      const wrapped = async (...args: Parameters<typeof node>) => {
        const update = (await node(...args)) as Record<string, unknown>;
        const keys = written.get(name) ?? new Set<string>();
        for (const key of Object.keys(update)) keys.add(key);
        written.set(name, keys);
        return update;
      };
      return wrapped as unknown as typeof node;
    }).compile({ checkpointer: new MemorySaver() });
    const config = {
      configurable: {
        thread_id: "w1",
        langgraph_auth_user: {
          user_id: "alice",
          tenant: "uni",
          role: "student",
          scopes: ["notes:read"],
          grants: { courses: ["cs301"] },
        },
      },
    };
    // The memory host has no search tool: authorize refuses the search, and the workflow stops on it.
    await graph.invoke({ messages: [new HumanMessage("What does cs301.a say?")] }, config);
    planner.assertDone();
    expect([...written.keys()].sort()).toEqual(["authorize", "observe", "plan"]);
    for (const [node, keys] of written) {
      const owned: readonly string[] = FIELD_OWNERS[node];
      for (const key of keys) expect(owned, `${node} wrote ${key}`).toContain(key);
    }
    const state = (await graph.getState(config)).values as State;
    expect(state.termination_reason).toMatchObject({
      code: "tool_failure",
      detail: expect.stringMatching(/^unknown_tool: search_notes/),
    });
    expect(tools.calls).toEqual([]);
  });
});
