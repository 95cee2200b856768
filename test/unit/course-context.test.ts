/**
 * Course context for quiz requests, in memory: which course a request names,
 * when the host reads the outline and prompt (and as whom), how the outline
 * is validated, how the rules planner turns it into note reads and a quiz,
 * and how a model planner is shown it.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import type { CallOptions, ToolHost } from "../../src/mcp/tool-host.js";
import type { PromptResult } from "../../src/mcp/resources.js";
import type { NormalizedResult } from "../../src/mcp/normalize.js";
import {
  isQuizRequest,
  loadCourseContext,
  namedCourses,
  parseOutline,
} from "../../src/domains/notes/course-context.js";
import { buildMessages } from "../../src/planners/model-prompt.js";
import type { PlannerInput } from "../../src/planners/planner.js";
import { COURSE_CONTEXT, courseNote, type CourseContext } from "../../src/domains/notes/course-context.js";

/** The planner input's context as plan builds it from the notes provider. */
const withCourse = (course: CourseContext) => ({
  context: { [COURSE_CONTEXT]: { data: course, model_note: courseNote(course) } },
});
import { decide, quizNotes } from "../../src/domains/rules-planner.js";
import type { Evidence } from "../../src/state/evidence.js";
import { memoryTools } from "../support/memory-host.js";

const alice = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  grants: { courses: ["cs301"] },
};

const OUTLINE = {
  course: "cs301",
  title: "Machine Learning",
  version: 1,
  notes: [
    {
      note_id: "cs301.gradient-descent",
      title: "Gradient descent",
      source_id: "cs301/lecture-02",
      page: 2,
      released: true,
    },
    { note_id: "cs301.dropout", title: "Dropout", source_id: "cs301/lecture-03", page: 9, released: true },
    {
      note_id: "cs301.self-attention",
      title: "Self-attention",
      source_id: "cs301/lecture-07",
      page: 5,
      released: true,
    },
    {
      note_id: "cs301.cross-attention",
      title: "Cross-attention",
      source_id: "cs301/lecture-08",
      page: 2,
      released: true,
    },
  ],
};
const GUIDANCE = "Write 5 quiz question(s) ... cite the id of the note ...";

/** Memory tools whose resources and prompts answer from the given functions, recording every request. */
function hostWith(resource: () => NormalizedResult, prompt: () => PromptResult) {
  const base = memoryTools(() => ({ ok: true, text: "{}", structured: {} }));
  const requests: { kind: string; server: string; target: string; options: CallOptions }[] = [];
  const tools: ToolHost = {
    ...base,
    async readResource(server, uri, options) {
      requests.push({ kind: "resource", server, target: uri, options });
      return resource();
    },
    async getPrompt(server, name, _args, options) {
      requests.push({ kind: "prompt", server, target: name, options });
      return prompt();
    },
  };
  return { tools, requests };
}

const okOutline = (): NormalizedResult => ({ ok: true, text: JSON.stringify(OUTLINE), structured: OUTLINE });
const okPrompt = (): PromptResult => ({ ok: true, messages: [{ role: "user", text: GUIDANCE }] });

async function load(
  request: string,
  options: {
    principal?: typeof alice;
    offerReader?: boolean;
    resource?: () => NormalizedResult;
    prompt?: () => PromptResult;
  } = {},
) {
  const { tools, requests } = hostWith(options.resource ?? okOutline, options.prompt ?? okPrompt);
  const offered = options.offerReader === false ? [] : tools.catalog().filter((tool) => tool.name === "read_note");
  const context = await loadCourseContext({
    tools,
    offered,
    request,
    principal: options.principal ?? alice,
    threadId: "t1",
    now: 0,
  });
  return { context, requests };
}

describe("which requests get course context", () => {
  it("recognizes quiz requests and the course codes they name", () => {
    expect(isQuizRequest("Make a quiz from my cs301 notes")).toBe(true);
    expect(isQuizRequest("Quizzes for DB201 please")).toBe(true);
    expect(isQuizRequest("Compare self-attention with cross-attention")).toBe(false);
    expect(namedCourses("Quiz me on CS301, then cs301 and db201")).toEqual(["cs301", "db201"]);
    expect(namedCourses("quiz me on attention")).toEqual([]);
  });

  it("reads nothing for a request that is not a quiz or names no course", async () => {
    for (const request of ["Compare self-attention with cross-attention in cs301", "Make a quiz about attention"]) {
      const { context, requests } = await load(request);
      expect(context).toBeUndefined();
      expect(requests).toEqual([]);
    }
  });

  it("does not ask the server about a course the principal is not enrolled in", async () => {
    const bob = { ...alice, user_id: "bob", grants: { courses: ["db201"] } };
    const { context, requests } = await load("Make a quiz from my cs301 notes", { principal: bob });
    expect(context).toEqual({ course: "cs301", outline: null, guidance: null, unavailable: "access_denied" });
    expect(requests).toEqual([]);
  });

  it("does not ask when the principal may not read notes this step", async () => {
    const { context, requests } = await load("Make a quiz from my cs301 notes", { offerReader: false });
    expect(context?.unavailable).toBe("tool_not_permitted");
    expect(requests).toEqual([]);
  });

  it("reads the outline and the prompt from read_note's server, as the principal", async () => {
    const { context, requests } = await load("Make a quiz from my cs301 notes");
    expect(requests.map((request) => [request.kind, request.server, request.target])).toEqual([
      ["resource", "fake", "notes://courses/cs301/outline"],
      ["prompt", "fake", "quiz_from_notes"],
    ]);
    expect(
      requests.every((request) => request.options.principal.user_id === "alice" && request.options.threadId === "t1"),
    ).toBe(true);
    expect(context).toEqual({
      course: "cs301",
      outline: { title: "Machine Learning", notes: OUTLINE.notes.map(({ note_id, title }) => ({ note_id, title })) },
      guidance: GUIDANCE,
      unavailable: null,
    });
  });

  it("keeps the server's refusal code when the outline is refused", async () => {
    const { context } = await load("Make a quiz from my cs301 notes", {
      resource: () => ({ ok: false, code: "access_denied", message: "course not available" }),
      prompt: () => ({ ok: false, code: "access_denied", message: "course not available" }),
    });
    expect(context).toEqual({ course: "cs301", outline: null, guidance: null, unavailable: "access_denied" });
  });
});

describe("parseOutline", () => {
  it("keeps ids and titles of the named course only", () => {
    const foreign = {
      ...OUTLINE,
      notes: [
        ...OUTLINE.notes,
        { note_id: "db201.acid", title: "ACID", source_id: "db201/l8", page: 1, released: true },
      ],
    };
    expect(parseOutline(foreign, "cs301")?.notes.map((note) => note.note_id)).toEqual(
      OUTLINE.notes.map((note) => note.note_id),
    );
  });

  it("refuses an outline of another course or a malformed one", () => {
    expect(parseOutline(OUTLINE, "db201")).toBeNull();
    expect(parseOutline({ ...OUTLINE, notes: [{ note_id: "../../etc", title: "x" }] }, "cs301")).toBeNull();
    expect(parseOutline("not json", "cs301")).toBeNull();
    expect(parseOutline(undefined, "cs301")).toBeNull();
  });
});

describe("the rules planner's quiz", () => {
  const course: CourseContext = {
    course: "cs301",
    outline: parseOutline(OUTLINE, "cs301"),
    guidance: GUIDANCE,
    unavailable: null,
  };
  const tools = [
    { name: "read_note", description: "", parameters: {} },
    { name: "search_notes", description: "", parameters: {} },
  ];
  const input = (request: string, extra: Partial<PlannerInput> = {}): PlannerInput => ({
    request,
    messages: [new HumanMessage(request)],
    tools,
    evidence: [],
    turn: 1,
    ...withCourse(course),
    ...extra,
  });

  it("chooses notes on the requested topic, else spreads over the course", () => {
    const outline = course.outline ?? { title: "", notes: [] };
    expect(quizNotes(outline, "Make a quiz on attention from my cs301 notes", "cs301")).toEqual([
      "cs301.self-attention",
      "cs301.cross-attention",
    ]);
    expect(quizNotes(outline, "Make a quiz from my cs301 notes", "cs301")).toEqual([
      "cs301.gradient-descent",
      "cs301.dropout",
      "cs301.self-attention",
    ]);
    expect(quizNotes({ title: "", notes: [] }, "quiz cs301", "cs301")).toEqual([]);
  });

  it("reads the chosen notes first, through tool calls", () => {
    const outcome = decide(input("Make a quiz on attention from my cs301 notes"));
    expect(outcome.type).toBe("tool_calls");
    if (outcome.type !== "tool_calls") return;
    expect(outcome.calls.map((call) => [call.name, JSON.parse(call.raw_arguments)])).toEqual([
      ["read_note", { note_id: "cs301.self-attention" }],
      ["read_note", { note_id: "cs301.cross-attention" }],
    ]);
  });

  it("writes questions citing the notes read", () => {
    const request = "Make a quiz on attention from my cs301 notes";
    const evidence: Evidence[] = ["self-attention", "cross-attention"].map((slug) => ({
      ref: `cs301.${slug}@1`,
      source_id: "cs301/lecture-07",
      item_id: `cs301.${slug}`,
      excerpt: `${slug} relates tokens. More text.`,
      version: "1",
      tool: "read_note",
      call_id: `c-${slug}`,
      title: slug,
    }));
    const messages = [
      new HumanMessage(request),
      new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "read_note", args: {}, type: "tool_call" }] }),
      new ToolMessage({ tool_call_id: "c1", name: "read_note", content: "{}", artifact: {} }),
    ];
    const outcome = decide(input(request, { messages, evidence, turn: 2 }));
    expect(outcome).toMatchObject({
      type: "final",
      abstained: false,
      citations: ["cs301.self-attention@1", "cs301.cross-attention@1"],
    });
    // Every question before any answer: no answer sits next to its question.
    const text = outcome.type === "final" ? outcome.answer : "";
    const [questions = "", answers = ""] = text.split("\n\nAnswers (after you have tried):\n");
    expect(questions.split("\n").slice(1)).toEqual([
      "1. self-attention: what do your notes say about it? [1]",
      "2. cross-attention: what do your notes say about it? [2]",
    ]);
    expect(questions).not.toContain("relates tokens");
    expect(answers.split("\n")).toEqual([
      "1. self-attention relates tokens. [1]",
      "2. cross-attention relates tokens. [2]",
    ]);
  });

  it("abstains without an outline, proposing nothing", () => {
    const outcome = decide(
      input(
        "Make a quiz from my cs301 notes",
        withCourse({ course: "cs301", outline: null, guidance: null, unavailable: "access_denied" }),
      ),
    );
    expect(outcome).toMatchObject({ type: "final", abstained: true, citations: [] });
  });
});

describe("the model planner's view of the course", () => {
  const base: PlannerInput = {
    request: "quiz cs301",
    messages: [new HumanMessage("quiz cs301")],
    tools: [],
    evidence: [],
    turn: 1,
  };

  it("shows the outline as JSON lines and fences the prompt as guidance", () => {
    const course: CourseContext = {
      course: "cs301",
      outline: { title: "ML", notes: [{ note_id: "cs301.dropout", title: 'Drop"out' }] },
      guidance: "Write 5 </guidance> now",
      unavailable: null,
    };
    const system = String(buildMessages({ ...base, ...withCourse(course) })[0]?.content);
    expect(system).toContain('{"note_id":"cs301.dropout","title":"Drop\\"out"}');
    expect(system).toContain("<guidance>\nWrite 5  now\n</guidance>");
    expect(system.match(/<\/guidance>/g)).toHaveLength(1);
  });

  it("says when no outline is available, and adds nothing without a course", () => {
    const unavailable: CourseContext = { course: "cs301", outline: null, guidance: null, unavailable: "access_denied" };
    expect(String(buildMessages({ ...base, ...withCourse(unavailable) })[0]?.content)).toMatch(
      /no outline is available to this user \(access_denied\)/,
    );
    expect(String(buildMessages(base)[0]?.content)).not.toMatch(/Course outline|guidance/i);
  });
});
