/**
 * The notes search (tools/notes/analysis.ts, expansion.ts, search.ts):
 * stemming, acronyms derived from the notes' titles and ids, synonyms from
 * the course's table, and the calibrated score the planners threshold
 * (src/domains/notes/retrieval.ts): a question just above the threshold is
 * answered, one just below is refused naming the closest notes, and below the
 * threshold a clear winner (above the floor, the margin over the next note)
 * is answered while one just short of the margin or the floor is not. Pure; reads
 * the shipped corpus and synonym table.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { beforeAll, describe, expect, it } from "vitest";
import { cannotFind, notesQuestion, retrieveFor } from "../../src/domains/notes/question.js";
import { CLEAR_FLOOR, CLEAR_MARGIN, ON_TOPIC } from "../../src/domains/notes/retrieval.js";
import { decide } from "../../src/domains/rules-planner.js";
import { ARROW, stem, tokenize } from "../../tools/notes/analysis.js";
import {
  buildSearchIndex,
  findPrincipal,
  loadCorpus,
  loadPrincipalDirectory,
  loadSynonyms,
  searchNotes,
  type Principal,
  type PrincipalDirectory,
  type SearchIndex,
} from "../../tools/notes/corpus.js";
import { acronymsOf, conceptsOf, expansionsFor, NO_SYNONYMS } from "../../tools/notes/expansion.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
let index: SearchIndex;
let bare: SearchIndex;
let directory: PrincipalDirectory;

beforeAll(async () => {
  const corpus = await loadCorpus(path.join(ROOT, "tools", "notes", "data", "notes.json"));
  directory = await loadPrincipalDirectory(path.join(ROOT, "src", "domains", "dev-principals.json"));
  index = buildSearchIndex(corpus, await loadSynonyms(path.join(ROOT, "tools", "notes", "data", "synonyms.json")));
  bare = buildSearchIndex(corpus, NO_SYNONYMS);
});

const who = (user: string): Principal => {
  const found = findPrincipal(directory, user);
  if (!found) throw new Error(`no ${user}`);
  return found;
};
const top = (searchIndex: SearchIndex, user: string, query: string) =>
  searchNotes(searchIndex, who(user), { query: notesQuestion(query).query, limit: 5 }).hits;

describe("stemming", () => {
  it("brings derived forms to one stem", () => {
    expect(new Set(["normalization", "normalized", "normal"].map(stem))).toEqual(new Set(["normal"]));
    expect(stem("minibatches")).toBe(stem("minibatch"));
    expect(tokenize("mini-batch")).toContain(stem("minibatches"));
    expect(stem("3NF".toLowerCase())).toBe("3nf");
  });

  it("reads contractions as function words and keeps a formula's arrow and subscripts", () => {
    expect(tokenize("Why shouldn't I touch it? Don't.")).toEqual([stem("touch")]);
    expect(tokenize("X -> Y holds")).toEqual(["x", ARROW, "y", stem("holds")]);
    expect(tokenize("mu_s times N")).toEqual(["mu_s", stem("times"), "n"]);
    expect(notesQuestion("What does X -> Y mean for a relation?").query).toContain("->");
    expect(notesQuestion("What is mu_s times the normal force?").query).toContain("mu_s");
  });

  it("finds the notes a formula is written in", () => {
    // Two db201 notes write dependencies as X -> Y: functional dependencies and third normal form.
    const arrows = top(index, "bob", "What does X -> Y mean?").slice(0, 2);
    expect(arrows.map((hit) => hit.note_id).sort()).toEqual([
      "db201.functional-dependencies",
      "db201.third-normal-form",
    ]);
    expect(top(index, "sam", "What is mu_s times the normal force?")[0]?.note_id).toBe("ph110.friction");
  });

  it("finds the normal-form notes for 'database normalization', which no title spells so", () => {
    const hits = top(index, "bob", "What do my notes say about database normalization?");
    expect(hits.slice(0, 3).every((hit) => /normal-form|bcnf/.test(hit.note_id))).toBe(true);
    expect(hits[0]?.score ?? 0).toBeGreaterThanOrEqual(ON_TOPIC);
  });
});

describe("acronym expansion", () => {
  const note = (note_id: string, title: string) => ({ note_id, course: "cs301", title });

  it("derives acronyms from a title's initials, its id and acronyms in parentheses", () => {
    expect(
      acronymsOf(note("cs301.retrieval-augmented-generation", "Retrieval-augmented generation"), new Set()).get("rag"),
    ).toBe("Retrieval-augmented generation");
    expect([
      ...acronymsOf(
        note("cs301.stochastic-gradient-descent", "Stochastic and mini-batch gradient descent"),
        new Set(),
      ).keys(),
    ]).toContain("sgd");
    expect([...acronymsOf(note("db201.two-phase-locking", "Two-phase locking (2PL)"), new Set()).keys()]).toContain(
      "2pl",
    );
  });

  it("takes no initials shorter than three letters, stop words or words the notes use", () => {
    const found = acronymsOf(note("cs301.word-embeddings", "Word embeddings"), new Set());
    expect(found.has("we")).toBe(false);
    expect(acronymsOf(note("cs301.x", "Sorting apples trees"), new Set(["sat"])).has("sat")).toBe(false);
  });

  it("expands an acronym in a question to the phrase it stands for", () => {
    const expansions = expansionsFor(
      [
        {
          note_id: "cs301.retrieval-augmented-generation",
          course: "cs301",
          title: "Retrieval-augmented generation",
          text: "x",
        },
      ],
      NO_SYNONYMS,
    );
    const [concept] = conceptsOf("rag", expansions);
    expect(concept?.alternatives).toEqual([["rag"], ["retriev", "augment", "gener"]]);
  });

  it("answers 'What is RAG?' and 'Why does SGD use minibatches?' from the notes they abbreviate", () => {
    expect(top(index, "alice", "What is RAG?")[0]?.note_id).toBe("cs301.retrieval-augmented-generation");
    expect(top(index, "alice", "Why does SGD use minibatches?")[0]?.note_id).toBe("cs301.stochastic-gradient-descent");
    expect(top(index, "alice", "What is RAG?")[0]?.score ?? 0).toBeGreaterThanOrEqual(ON_TOPIC);
  });

  it("ranks the note whose title the acronym abbreviates over one that only mentions it", () => {
    const hits = top(index, "alice", "What is MHA?");
    expect(hits[0]?.note_id).toBe("cs301.multi-head-attention");
    expect(hits.find((hit) => hit.note_id === "cs301.revision-tips")?.score ?? 0).toBeLessThan(hits[0]?.score ?? 0);
  });
});

describe("synonyms", () => {
  it("uses the course's table: 'switch off neurons' reaches the dropout note only with it", () => {
    const question = "Why would I randomly switch off neurons during training?";
    const withTable = top(index, "alice", question);
    expect(withTable[0]?.note_id).toBe("cs301.dropout");
    expect(withTable[0]?.score ?? 0).toBeGreaterThan(top(bare, "alice", question)[0]?.score ?? 0);
  });
});

describe("calibrated scores", () => {
  it("scores from the asker's visible notes only, and never returns another course's", () => {
    const hits = top(index, "bob", "What is self-attention?");
    expect(hits.every((hit) => hit.course === "db201")).toBe(true);
    expect(hits.every((hit) => hit.score < ON_TOPIC)).toBe(true);
  });

  it("keeps every score within 0..1", () => {
    for (const hit of top(index, "sam", "energy momentum attention index lock normal form"))
      expect(hit.score > 0 && hit.score <= 1).toBe(true);
  });
});

describe("threshold boundary", () => {
  const request = "What do my notes say about oscillation damping?";
  const hit = (score: number) => ({
    note_id: "ph110.damped-oscillations",
    source_id: "ph110/lecture-11",
    course: "ph110",
    title: "Damped oscillations",
    page: 1,
    score,
    snippet: "A velocity-proportional drag force makes the amplitude of an oscillator decay.",
  });
  const runnerUp = (score: number) => ({
    ...hit(score),
    note_id: "ph110.resonance",
    title: "Driven oscillations and resonance",
  });
  const planAfterSearch = (score: number, next?: number) => {
    const hits = next === undefined ? [hit(score)] : [hit(score), runnerUp(next)];
    const result = { hits, total: hits.length };
    return decide({
      request,
      messages: [
        new HumanMessage(request),
        new AIMessage({ content: "", tool_calls: [{ id: "s1", name: "search_notes", args: {}, type: "tool_call" }] }),
        new ToolMessage({
          tool_call_id: "s1",
          name: "search_notes",
          content: JSON.stringify(result),
          artifact: result,
        }),
      ],
      tools: [
        { name: "search_notes", description: "", parameters: {} },
        { name: "read_note", description: "", parameters: {} },
      ],
      evidence: [],
      turn: 2,
    });
  };

  it("reads a note scored just at or above the threshold", () => {
    for (const score of [ON_TOPIC, ON_TOPIC + 0.0001]) {
      const outcome = planAfterSearch(score);
      expect(outcome.type).toBe("tool_calls");
      if (outcome.type === "tool_calls")
        expect(outcome.calls.map((call) => [call.name, JSON.parse(call.raw_arguments)])).toEqual([
          ["read_note", { note_id: "ph110.damped-oscillations" }],
        ]);
    }
  });

  it("refuses just below it, naming the closest notes so the student can rephrase", () => {
    const outcome = planAfterSearch(ON_TOPIC - 0.0001, ON_TOPIC - 0.0002);
    expect(outcome).toEqual(
      cannotFind(notesQuestion(request), [
        { note_id: "ph110.damped-oscillations", title: "Damped oscillations" },
        { note_id: "ph110.resonance", title: "Driven oscillations and resonance" },
      ]),
    );
    expect(outcome.type === "final" && outcome.abstained && outcome.citations.length === 0).toBe(true);
    expect(outcome.type === "final" && outcome.answer.includes("ph110.damped-oscillations")).toBe(true);
  });

  it("below it, reads a clear winner: at the floor and the margin over the next note", () => {
    const reads = (outcome: ReturnType<typeof planAfterSearch>) =>
      outcome.type === "tool_calls" ? outcome.calls.map((call) => JSON.parse(call.raw_arguments).note_id) : [];
    const below = ON_TOPIC - 0.01;
    expect(reads(planAfterSearch(below, below / CLEAR_MARGIN))).toEqual(["ph110.damped-oscillations"]);
    expect(reads(planAfterSearch(CLEAR_FLOOR, CLEAR_FLOOR / CLEAR_MARGIN))).toEqual(["ph110.damped-oscillations"]);
    const refused = { type: "final", abstained: true, citations: [] };
    expect(planAfterSearch(below, below / CLEAR_MARGIN + 0.001)).toMatchObject(refused);
    expect(planAfterSearch(CLEAR_FLOOR - 0.0001, (CLEAR_FLOOR - 0.0001) / CLEAR_MARGIN)).toMatchObject(refused);
  });

  it("judges a sole hit below the threshold by the threshold alone: it stands out from nothing", () => {
    expect(planAfterSearch(ON_TOPIC - 0.0001)).toMatchObject({ type: "final", abstained: true, citations: [] });
  });

  it("names no closest note far below it, and none of another course than the one asked", () => {
    expect(retrieveFor(notesQuestion(request), [hit(0.05)], 3)).toEqual({ type: "abstain", closest: [] });
    expect(retrieveFor(notesQuestion("What do my cs301 notes say about damping?"), [hit(0.4)], 3)).toEqual({
      type: "abstain",
      closest: [],
    });
  });

  it("holds for real questions: one the notes cover scores above, one they do not scores below", () => {
    const covered = top(index, "sam", "What happens when you drive an oscillator at its natural frequency?");
    expect(covered[0]?.note_id).toBe("ph110.resonance");
    expect(covered[0]?.score ?? 0).toBeGreaterThanOrEqual(ON_TOPIC);
    const absent = top(index, "alice", "What do my notes say about convolutional neural networks?");
    expect(absent.every((entry) => entry.score < ON_TOPIC)).toBe(true);
  });
});
