/**
 * Coverage of multi-word concepts (tools/notes/phrases.ts, search.ts,
 * expansion.ts): a phrase is mentioned where its words stand together, and a
 * question's compound that diverges from a title's ("two-phase commit" vs
 * "Two-phase locking") is its own concept, so the note of the other compound
 * is not evidence for it. The two false answers of the labelled set before
 * this rule are the real cases here.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { notesQuestion, retrieveFor } from "../../src/domains/notes/question.js";
import { ON_TOPIC } from "../../src/domains/notes/retrieval.js";
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
import { conceptsOf, expansionsFor, NO_SYNONYMS } from "../../tools/notes/expansion.js";
import { phraseMentions, termStream } from "../../tools/notes/phrases.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
let index: SearchIndex;
let directory: PrincipalDirectory;

beforeAll(async () => {
  const corpus = await loadCorpus(path.join(ROOT, "tools", "notes", "data", "notes.json"));
  directory = await loadPrincipalDirectory(path.join(ROOT, "src", "domains", "dev-principals.json"));
  index = buildSearchIndex(corpus, await loadSynonyms(path.join(ROOT, "tools", "notes", "data", "synonyms.json")));
});

const who = (user: string): Principal => {
  const found = findPrincipal(directory, user);
  if (!found) throw new Error(`no ${user}`);
  return found;
};
const hitsFor = (user: string, request: string) =>
  searchNotes(index, who(user), { query: notesQuestion(request).query, limit: 5 }).hits;
const decision = (user: string, request: string) =>
  retrieveFor(notesQuestion(request), hitsFor(user, request), 3, request);

describe("phrase mentions", () => {
  it("count a phrase only where its words stand together, hyphens and stop words aside", () => {
    const streams = { title: termStream("Second normal form"), text: termStream("part of a candidate key; the key") };
    expect(phraseMentions(streams, [termStream("candidate key")], 2)).toEqual({ mentions: 1, inTitle: false });
    const apart = { title: [], text: termStream("a candidate row with a key column") };
    expect(phraseMentions(apart, [termStream("candidate key")], 2).mentions).toBe(0);
    const hyphen = { title: termStream("Two-phase locking"), text: termStream("two phase locking") };
    expect(phraseMentions(hyphen, [termStream("two-phase locking")], 2)).toEqual({ mentions: 3, inTitle: true });
  });

  it("count overlapping ways of writing a concept once per place", () => {
    const streams = { title: [], text: termStream("a minimal superkey is a candidate key") };
    const ways = [termStream("minimal superkey"), termStream("superkey"), termStream("candidate key")];
    expect(phraseMentions(streams, ways, 2).mentions).toBe(2);
  });
});

describe("a question's compound that diverges from a title's", () => {
  const notes = [
    { note_id: "db201.two-phase-locking", course: "db201", title: "Two-phase locking (2PL)", text: "commit" },
    { note_id: "cs301.bias-variance", course: "cs301", title: "The bias-variance trade-off", text: "" },
  ];
  const expansions = expansionsFor(notes, NO_SYNONYMS);
  const words = (query: string) => conceptsOf(query, expansions).map((concept) => concept.words);

  it("is one concept: 'two-phase commit' is not the title's 'two-phase locking'", () => {
    expect(words("two-phase commit protocol")).toEqual(["two-phase commit", "protocol"]);
    expect(conceptsOf("two-phase commit", expansions)[0]).toMatchObject({
      alternatives: [["two", "phase", "commit"]],
      partial: [["two", "phase"]],
    });
  });

  it("is not declared when the question has the title's own word, or writes a hyphenated continuation joined", () => {
    expect(words("strict two-phase locking")).toEqual(["two-phase locking", "strict"]);
    expect(words("two-phase commit versus two-phase locking")).not.toContain("two-phase commit");
    expect(words("bias variance tradeoff")).toEqual(["bias variance", "tradeoff"]);
  });
});

describe("the labelled set's former false answers, through the planner's retrieval", () => {
  it("refuses 'two-phase commit' although the two-phase locking note has both words", () => {
    const hits = hitsFor("bob", "How does the two-phase commit protocol work?");
    expect(hits.every((hit) => hit.score < ON_TOPIC)).toBe(true);
    expect(decision("bob", "How does the two-phase commit protocol work?")).toMatchObject({ type: "abstain" });
  });

  it("still answers two-phase locking itself from its note, above the threshold", () => {
    const hits = hitsFor("bob", "How does strict two-phase locking avoid cascading aborts?");
    expect(hits[0]).toMatchObject({ note_id: "db201.two-phase-locking" });
    expect(hits[0]?.score ?? 0).toBeGreaterThanOrEqual(ON_TOPIC);
    expect(decision("bob", "What is two-phase locking?")).toEqual({
      type: "answer",
      note_ids: ["db201.two-phase-locking"],
    });
  });

  it("answers 'find a candidate key' from the closure note, which names it twice, not the 2NF note that says 'key' often", () => {
    expect(decision("bob", "How do I find a candidate key?")).toEqual({
      type: "answer",
      note_ids: ["db201.attribute-closure"],
    });
  });
});

describe("a stem shared by two words", () => {
  it("answers from the note that uses the question's own word: 'atomicity' from ACID, not 1NF's 'atomic'", () => {
    const hits = hitsFor("bob", "What does atomicity mean?");
    const acid = hits.find((hit) => hit.note_id === "db201.acid")?.score ?? 0;
    const firstNormalForm = hits.find((hit) => hit.note_id === "db201.first-normal-form")?.score ?? 0;
    expect(acid).toBeGreaterThan(firstNormalForm);
    // A tie-break only: the other note keeps (within rounding) 99% of the score.
    expect(firstNormalForm).toBeGreaterThanOrEqual(0.98 * acid);
    expect(decision("bob", "What does atomicity mean?")).toEqual({ type: "answer", note_ids: ["db201.acid"] });
  });
});
