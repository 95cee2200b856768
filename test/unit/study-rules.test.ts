/**
 * The rules planner's study branch and its honest limits, turn by turn, with
 * no I/O: the planner's proposals are answered by the notes server's own
 * search and access logic over a small corpus, the schedule server's own
 * allocation, and a calendar that creates or rejects as a reviewer decides.
 * Messages are built as the graph builds them (AI tool calls, tool messages
 * wrapped by `plannerContext`), so the planner reads what it reads in a run.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { extractEvidence } from "../../src/state/extract-evidence.js";
import { plannerContext } from "../../src/planners/context.js";
import type { PlanOutcome } from "../../src/planners/planner.js";
import type { ToolSpec } from "../../src/policy/contracts.js";
import { decide, NEEDS_MODEL } from "../../src/domains/rules-planner.js";
import { CAN_DO, whatICanDo } from "../../src/domains/repertoire.js";
import type { Evidence } from "../../src/state/evidence.js";
import { buildSearchIndex, readNote, searchNotes, type Principal } from "../../tools/notes/corpus.js";
import { calculateSchedule } from "../../tools/schedule/schedule.js";

const note = (course: string, slug: string, title: string, text: string) => ({
  note_id: `${course}.${slug}`,
  source_id: `${course}/lecture-07`,
  course,
  title,
  page: 1,
  released: true,
  text,
});
const INDEX = buildSearchIndex({
  version: 1,
  notes: [
    note(
      "cs301",
      "self-attention",
      "Self-attention",
      "In self-attention the queries, keys and values come from the same sequence.",
    ),
    note(
      "cs301",
      "cross-attention",
      "Cross-attention",
      "In cross-attention the queries come from one sequence and the keys from another; compare self-attention.",
    ),
    note(
      "cs301",
      "scaled-dot-product-attention",
      "Scaled dot-product attention",
      "Attention scores are normalized with a softmax.",
    ),
    note("cs301", "l2-regularization", "L2 regularization", "L2 regularization adds a penalty on squared weights."),
    note("cs301", "study-tips", "Study tips", "Redo the worked examples by hand before the exam."),
    {
      ...note("cs301", "exam-2-solutions", "Exam 2 worked solutions", "Problem 1: the attention weights sum to one."),
      released: false,
    },
    note("db201", "acid", "ACID properties", "Transactions are atomic, consistent, isolated and durable."),
  ],
});
const student = (user: string, course: string): Principal => ({
  user_id: user,
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  courses: [course],
});
const ALICE = student("alice", "cs301");
const BOB = student("bob", "db201");

const spec = (name: string, properties: Record<string, unknown> = {}): ToolSpec => ({
  name,
  description: name,
  parameters: { type: "object", properties },
});
const CALENDAR_PROPERTIES = {
  title: { type: "string" },
  start: { type: "string" },
  end: { type: "string" },
  timezone: { type: "string" },
  calendar: { type: "string" },
};
const TOOLS = [
  spec("search_notes"),
  spec("read_note"),
  spec("calculate_schedule"),
  spec("create_study_event", CALENDAR_PROPERTIES),
  spec("list_events"),
];

type Answer = { ok: true; structured: Record<string, unknown> } | { ok: false; code: string; message: string };
type Review = (
  args: Record<string, unknown>,
  index: number,
) => { type: "approve" } | { type: "reject"; message: string };

function tool(
  principal: Principal,
  name: string,
  args: Record<string, unknown>,
  review: Review,
  index: number,
): Answer {
  if (name === "search_notes")
    return {
      ok: true,
      structured: searchNotes(INDEX, principal, { query: String(args["query"]), limit: Number(args["limit"] ?? 5) }),
    };
  if (name === "read_note") {
    const found = readNote(INDEX, principal, String(args["note_id"]));
    return found
      ? { ok: true, structured: found }
      : { ok: false, code: "access_denied", message: "note not found or not accessible" };
  }
  if (name === "calculate_schedule") {
    const outcome = calculateSchedule({
      total_minutes: Number(args["total_minutes"]),
      days: Number(args["days"]),
      daily_limit: Number(args["daily_limit"]),
    });
    return outcome.ok ? { ok: true, structured: outcome.schedule } : { ok: false, ...outcome.error };
  }
  if (name === "create_study_event") {
    const decision = review(args, index);
    // The message human_review gives a rejection: who rejected (here the owner, alice), and why.
    if (decision.type === "reject")
      return { ok: false, code: "approval_rejected", message: `rejected by alice (the owner): ${decision.message}` };
    return {
      ok: true,
      structured: {
        event: {
          event_id: `evt_${index}`,
          user_id: principal.user_id,
          idempotency_key: `key-${index}`,
          created_at: "2026-12-01T00:00:00Z",
          ...args,
        },
        replayed: false,
      },
    };
  }
  return { ok: false, code: "unknown_tool", message: name };
}

interface Run {
  turns: PlanOutcome[];
  /** Each turn's proposals as [tool, args]. */
  proposals: [string, Record<string, unknown>][][];
  final: PlanOutcome;
  evidence: Evidence[];
}

/** Runs the planner to its end the way the graph does: propose → answer each call → plan again. */
function run(request: string, options: { principal?: Principal; tools?: ToolSpec[]; review?: Review } = {}): Run {
  const principal = options.principal ?? ALICE;
  const review = options.review ?? (() => ({ type: "approve" as const }));
  const messages: BaseMessage[] = [new HumanMessage(request)];
  const evidence: Evidence[] = [];
  const turns: PlanOutcome[] = [];
  const proposals: Run["proposals"] = [];
  for (let turn = 1; turn <= 8; turn += 1) {
    const outcome = decide({
      request,
      messages: plannerContext(messages),
      tools: options.tools ?? TOOLS,
      evidence,
      turn,
    });
    turns.push(outcome);
    if (outcome.type !== "tool_calls") return { turns, proposals, final: outcome, evidence };
    const calls = outcome.calls.map((call) => ({
      call,
      args: JSON.parse(call.raw_arguments) as Record<string, unknown>,
    }));
    proposals.push(calls.map(({ call, args }) => [call.name, args]));
    messages.push(
      new AIMessage({
        content: "",
        tool_calls: calls.map(({ call, args }) => ({
          id: call.call_id,
          name: call.name,
          args,
          type: "tool_call" as const,
        })),
      }),
    );
    calls.forEach(({ call, args }, index) => {
      const answer = tool(principal, call.name, args, review, index);
      if (answer.ok) {
        messages.push(
          new ToolMessage({
            tool_call_id: call.call_id,
            name: call.name,
            content: JSON.stringify(answer.structured),
            artifact: answer.structured,
          }),
        );
        for (const item of extractEvidence(answer.structured, call.name, call.call_id))
          if (!evidence.some((known) => known.ref === item.ref)) evidence.push(item);
      } else {
        messages.push(
          new ToolMessage({
            tool_call_id: call.call_id,
            name: call.name,
            status: "error",
            content: JSON.stringify({ error: { code: answer.code, message: answer.message } }),
          }),
        );
      }
    });
  }
  throw new Error("the planner did not finish in 8 turns");
}

const HEADLINE =
  "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day, " +
  "starting 2026-12-02 at 18:00 UTC, and put it in my calendar";

describe("a study plan into the calendar", () => {
  it("searches and schedules, reads the relevant notes, then proposes every session in one turn", () => {
    const { proposals, final } = run(HEADLINE);
    expect(proposals.map((turn) => turn.map(([name]) => name))).toEqual([
      ["search_notes", "calculate_schedule"],
      ["read_note", "read_note", "read_note"],
      ["create_study_event", "create_study_event", "create_study_event"],
    ]);
    expect(proposals[0]).toEqual([
      ["search_notes", { query: "attention", limit: 5 }],
      ["calculate_schedule", { total_minutes: 120, days: 3, daily_limit: 60 }],
    ]);
    // Only relevant hits are read: the L2 note never is.
    expect(proposals[1]?.map(([, args]) => args["note_id"])).not.toContain("cs301.l2-regularization");
    expect(proposals[2]?.map(([, args]) => args)).toEqual([
      {
        title: "Study: attention (40 min)",
        start: "2026-12-02T18:00:00+00:00",
        end: "2026-12-02T18:40:00+00:00",
        timezone: "UTC",
        calendar: "study",
      },
      {
        title: "Study: attention (40 min)",
        start: "2026-12-03T18:00:00+00:00",
        end: "2026-12-03T18:40:00+00:00",
        timezone: "UTC",
        calendar: "study",
      },
      {
        title: "Study: attention (40 min)",
        start: "2026-12-04T18:00:00+00:00",
        end: "2026-12-04T18:40:00+00:00",
        timezone: "UTC",
        calendar: "study",
      },
    ]);
    expect(final.type).toBe("final");
    if (final.type !== "final") return;
    expect(final.abstained).toBe(false);
    expect(final.citations.sort()).toEqual([
      "cs301.cross-attention@1",
      "cs301.scaled-dot-product-attention@1",
      "cs301.self-attention@1",
    ]);
    expect(final.answer).toContain("3 of 3 session(s) created");
    for (const id of ["evt_0", "evt_1", "evt_2"]) expect(final.answer).toContain(id);
  });

  it("says which sessions were rejected and why, and lists only the created ones as created", () => {
    const { final } = run(HEADLINE, {
      review: (_args, index) => (index === 2 ? { type: "reject", message: "not on Friday" } : { type: "approve" }),
    });
    expect(final.type).toBe("final");
    if (final.type !== "final") return;
    expect(final.answer).toContain("2 of 3 session(s) created");
    expect(final.answer).toMatch(
      /Not created:\n- Study: attention \(40 min\) at 2026-12-04T18:00:00\+00:00: rejected by alice \(the owner\): not on Friday/,
    );
    expect(final.answer).not.toContain("evt_2");
  });

  it("adds the contents (topic and cited notes) when the calendar takes a description", () => {
    const tools = TOOLS.map((tool) =>
      tool.name === "create_study_event"
        ? spec("create_study_event", { ...CALENDAR_PROPERTIES, description: { type: "string", maxLength: 2000 } })
        : tool,
    );
    const { proposals } = run(HEADLINE, { tools });
    const description = String(proposals[2]?.[0]?.[1]["description"]);
    expect(description).toMatch(/^Topic: attention\. Session 1 of 3 \(40 min\)\. Notes: /);
    expect(description).toContain("cs301.self-attention (Self-attention)");
  });

  it("explains a plan that does not fit with the schedule's own reason, and proposes no write", () => {
    const { final, proposals } = run(
      "Plan 300 minutes of attention over 2 days, at most 60 a day, starting 2026-12-02 18:00 UTC, and put it in my calendar",
    );
    expect(final).toMatchObject({
      type: "needs_human",
      reason: expect.stringMatching(
        /^capacity_exceeded: 300 minutes do not fit in 2 day\(s\) at most 60 a day: total_minutes 300 exceeds capacity 120/,
      ),
    });
    expect(proposals.flat().map(([name]) => name)).not.toContain("create_study_event");
  });

  it("proposes one event for one session", () => {
    const { proposals, final } = run(
      "Put a 40 minute study session for attention on 2026-12-02 at 18:00 UTC in my calendar",
    );
    const writes = proposals.flat().filter(([name]) => name === "create_study_event");
    expect(writes).toEqual([
      [
        "create_study_event",
        {
          title: "Study: attention (40 min)",
          start: "2026-12-02T18:00:00+00:00",
          end: "2026-12-02T18:40:00+00:00",
          timezone: "UTC",
          calendar: "study",
        },
      ],
    ]);
    expect(final).toMatchObject({ type: "final", abstained: false });
  });

  it("keeps the wall-clock start in the user's zone", () => {
    const { proposals } = run(
      "Schedule 2 hours of self-attention over 2 days from 2026-12-02 at 19:00 Europe/Berlin, " +
        "at most 1 hour a day, and add it to my calendar",
    );
    expect(
      proposals
        .flat()
        .filter(([name]) => name === "create_study_event")
        .map(([, args]) => [args["start"], args["end"], args["timezone"]]),
    ).toEqual([
      ["2026-12-02T19:00:00+01:00", "2026-12-02T20:00:00+01:00", "Europe/Berlin"],
      ["2026-12-03T19:00:00+01:00", "2026-12-03T20:00:00+01:00", "Europe/Berlin"],
    ]);
  });

  it("asks for the start before touching any tool", () => {
    const { turns, final } = run("Add a 60 minute study session on attention to my calendar");
    expect(turns).toHaveLength(1);
    expect(final).toMatchObject({ type: "needs_human", reason: expect.stringMatching(/^missing_start: /) });
  });

  it("does not plan from notes bob cannot read, and writes nothing", () => {
    const { final, proposals } = run(HEADLINE, { principal: BOB });
    expect(final).toMatchObject({
      type: "needs_human",
      reason: expect.stringMatching(/^no_evidence: none of the notes you can access cover "attention"/),
    });
    expect(proposals.flat().map(([name]) => name)).not.toContain("create_study_event");
  });

  it("says so when the calendar write is not available to the user", () => {
    const { final, turns } = run(HEADLINE, { tools: TOOLS.filter((tool) => tool.name !== "create_study_event") });
    expect(turns).toHaveLength(1);
    expect(final).toMatchObject({
      type: "needs_human",
      reason: expect.stringMatching(/^tool_not_permitted: creating calendar events/),
    });
  });

  it("keeps the plain schedule answer for a plan with no topic and no calendar", () => {
    const { final, proposals } = run("Split 121 minutes of revision over 3 days, at most 60 per day");
    expect(proposals).toEqual([[["calculate_schedule", { total_minutes: 121, days: 3, daily_limit: 60 }]]]);
    expect(final).toEqual({
      type: "final",
      answer: "Schedule: day 1: 41 min, day 2: 40 min, day 3: 40 min.",
      citations: [],
      abstained: false,
    });
  });
});

describe("a division between topics", () => {
  const DIVIDE = "Divide 180 minutes between self-attention, cross-attention and normalization using my notes";

  it("splits among the topics the notes support, citing one note each, and names the unsupported one", () => {
    const { final, proposals } = run(DIVIDE);
    expect(proposals[0]?.map(([, args]) => args["query"])).toEqual([
      "self-attention",
      "cross-attention",
      "normalization",
    ]);
    expect(proposals[1]?.map(([, args]) => args["note_id"])).toEqual(["cs301.self-attention", "cs301.cross-attention"]);
    expect(final.type).toBe("final");
    if (final.type !== "final") return;
    expect(final.citations).toEqual(["cs301.self-attention@1", "cs301.cross-attention@1"]);
    const shares = [...final.answer.matchAll(/^- [a-z-]+: (\d+) min/gm)].map((match) => Number(match[1]));
    expect(shares).toEqual([90, 90]);
    expect(shares.reduce((sum, minutes) => sum + minutes, 0)).toBe(180);
    expect(final.answer).toMatch(/Unsupported: "normalization"/);
  });

  it("abstains for bob, whose notes support none of the topics, inventing nothing", () => {
    const { final } = run(DIVIDE, { principal: BOB });
    expect(final).toMatchObject({ type: "final", abstained: true, citations: [] });
    if (final.type === "final") expect(final.answer).toContain('"self-attention", "cross-attention", "normalization"');
  });
});

describe("honest limits of the rules planner", () => {
  it.each([
    "Send an email to my professor about attention",
    "Summarize my notes folder into summary.txt",
    "What is on my calendar next week?",
    "Please delete my study events",
    "Can you translate the self-attention note into German?",
  ])("asks for a model planner instead of answering: %s", (request) => {
    const { final, turns } = run(request);
    expect(turns).toHaveLength(1);
    expect(final).toEqual({ type: "needs_human", reason: `${NEEDS_MODEL}. ${whatICanDo([])}` });
    expect(NEEDS_MODEL).toContain(
      "this request needs a model planner (set WARRANT_MODEL and an OpenAI-compatible endpoint)",
    );
  });

  it("ends a refusal with what it can do when the request named neither the notes nor a course", () => {
    // Issue 37: "what's the weather tomorrow?" is searched like a notes question; finding nothing, it says what it can do.
    const other = run("what's the weather tomorrow?");
    expect(other.proposals).toEqual([[["search_notes", { query: "weather tomorrow", limit: 5 }]]]);
    expect(other.final).toMatchObject({ type: "final", abstained: true, citations: [] });
    if (other.final.type === "final") expect(other.final.answer.endsWith(` ${whatICanDo([])}`)).toBe(true);
    // Asked about the notes, or a course's, the refusal stays the plain "I can't find notes on …".
    for (const request of ["What do my notes say about the weather?", "What does cs301 say about the weather?"]) {
      const { final } = run(request);
      expect(final).toMatchObject({ type: "final", abstained: true, citations: [] });
      if (final.type === "final") expect(final.answer).not.toContain(CAN_DO);
    }
  });

  it("abstains when every hit is below the relevance floor", () => {
    // BM25 finds the L2 note through "adds"; no content word of the question is in its title or excerpt.
    const { final, proposals } = run("What adds up to zero?");
    expect(proposals).toEqual([[["search_notes", { query: "adds up zero", limit: 5 }]]]);
    expect(final).toMatchObject({ type: "final", abstained: true, citations: [] });
  });

  it("still answers a notes question from relevant hits", () => {
    const { final } = run("Compare self-attention with cross-attention using my notes");
    expect(final).toMatchObject({ type: "final", abstained: false });
    if (final.type === "final") expect(final.citations).toContain("cs301.self-attention@1");
  });

  it("says it cannot find notes of a course the user cannot read, rather than answering from another course's", () => {
    // alice's search finds her cs301 attention notes; none is a db201 note, so none is evidence.
    const { final, proposals } = run("What do my db201 notes say about attention?");
    expect(proposals).toEqual([[["search_notes", { query: "db201 attention", limit: 5 }]]]);
    expect(final).toEqual({
      type: "final",
      answer: `I can't find notes on "attention" in db201 that you can read, so I won't answer from unrelated notes.`,
      citations: [],
      abstained: true,
    });
  });

  it("answers from the named course when the user can read it", () => {
    const { final } = run("What do my cs301 notes say about self-attention?");
    expect(final).toMatchObject({ type: "final", abstained: false });
    if (final.type === "final") expect(final.citations).toContain("cs301.self-attention@1");
  });

  it("says it cannot find an unreleased note, rather than answering from notes that share a word with it", () => {
    // The search never returns the unreleased note; the study tips share "worked" and "exam" but are not about the solutions.
    const { final, proposals } = run("Show me the exam 2 worked solutions");
    expect(proposals).toEqual([[["search_notes", { query: "exam worked solutions", limit: 5 }]]]);
    expect(final).toMatchObject({ type: "final", abstained: true, citations: [] });
    if (final.type === "final")
      expect(final.answer).toMatch(/^I can't find notes on "exam worked solutions" that you can read/);
  });

  it("asks for the course of a quiz that names none", () => {
    expect(run("Make a quiz on attention").final).toMatchObject({
      type: "needs_human",
      reason: expect.stringMatching(/^missing_course: /),
    });
  });
});
