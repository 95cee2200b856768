/**
 * The third round's mechanisms of the notes search (issue 27), each with the
 * real case of the calibration set that it fixed (every one fails on the
 * search before it): a compound's parts do not match a different compound
 * (compounds.ts, expansion.ts), one-letter formula variables are terms
 * (analysis.ts, question.ts), a phrase may have one other term inside it
 * (phrases.ts), acronyms come from note text too (expansion.ts), a repeated
 * concept counts once, "point" and "cause" are asking words, and the
 * plain-English synonym entries of tools/notes/data/synonyms.json.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LabelledQuestion } from "../../eval/retrieval/questions.js";
import { loadFixture, runQuestion, type Fixture } from "../../eval/retrieval/run.js";
import { searchQuery } from "../../src/domains/notes/question.js";
import { tokenize } from "../../tools/notes/analysis.js";
import { noteCompounds, partsFree } from "../../tools/notes/compounds.js";
import { conceptsOf, expansionsFor, NO_SYNONYMS, textAcronymsOf } from "../../tools/notes/expansion.js";
import { phraseMentions, termStream } from "../../tools/notes/phrases.js";

let fixture: Fixture;

beforeAll(async () => {
  fixture = await loadFixture();
});

/** What the rules planner reads for a question (eval/retrieval/run.ts: its own `decide`, the server's search). */
function reads(user: LabelledQuestion["user"], question: string): string[] {
  const labelled: LabelledQuestion = { id: "t", course: "cs301", user, question, kind: "direct", answers: "abstain" };
  return runQuestion(fixture, labelled).cited;
}

describe("compounds", () => {
  it("match a compound's parts apart only where each is free or in the same compound", () => {
    const encoderDecoder = noteCompounds("cross-attention over the encoder-decoder outputs");
    const own = new Set(["cross", "encod"]);
    expect(partsFree(encoderDecoder, ["cross", "encod"], own)).toBe(false);
    expect(partsFree(noteCompounds("a cross-encoder reranker"), ["cross", "encod"], own)).toBe(true);
    expect(partsFree(noteCompounds("cross the encoder"), ["cross", "encod"], own)).toBe(true);
  });

  it("give no partial match for a part two concepts of the question share", () => {
    const expansions = expansionsFor([], NO_SYNONYMS);
    const [bi, cross] = conceptsOf("bi-encoder cross-encoder", expansions);
    expect(bi?.partial ?? []).not.toContainEqual(["encod"]);
    expect(cross?.partial ?? []).not.toContainEqual(["encod"]);
    expect(cross?.shared).toEqual(["encod"]);
    expect(conceptsOf("cross-encoder", expansions)[0]?.partial).toContainEqual(["encod"]);
  });

  it("keep the encoder-decoder note out of a bi-encoder vs cross-encoder comparison, and each side's note in", () => {
    const cited = reads("alice", "Compare a bi-encoder with a cross-encoder");
    expect(cited).toContain("cs301.reranking");
    expect(cited).not.toContain("cs301.encoder-decoder-attention");
    expect(reads("alice", "Compare self-attention and cross-attention")).toEqual(
      expect.arrayContaining(["cs301.self-attention", "cs301.cross-attention"]),
    );
  });
});

describe("one-letter formula variables", () => {
  it("are terms of notes and questions, but 'a', 'i' and contraction endings are not", () => {
    expect(tokenize("one half m v squared")).toEqual(expect.arrayContaining(["m", "v"]));
    expect(tokenize("I saw a cat")).not.toContain("i");
    expect(tokenize("I saw a cat")).not.toContain("a");
    expect(tokenize("it doesn't")).toEqual([]);
    expect(searchQuery("What's one half m v squared?")).toBe("one half m v squared");
  });

  it("find the work-energy note for one half m v squared, not the harmonic-motion note (one half k A squared)", () => {
    expect(reads("pia", "What is one half m v squared?")).toEqual(["ph110.work-energy-theorem"]);
  });

  it("weigh nothing when no readable note uses the variable", () => {
    // "t" of QK^T is in no cs301 note: the question is still answered from the attention note.
    expect(reads("alice", "What does softmax(QK^T / sqrt(d_k)) V compute?")).toContain(
      "cs301.scaled-dot-product-attention",
    );
  });
});

describe("phrases with a gap", () => {
  it("mention a phrase with one other term inside it, not two, and not across a stop word", () => {
    const phrase = [termStream("net force")];
    expect(phraseMentions({ title: [], text: termStream("a net external force acts") }, phrase, 2).mentions).toBe(1);
    expect(phraseMentions({ title: [], text: termStream("net large external force") }, phrase, 2).mentions).toBe(0);
    expect(phraseMentions({ title: [], text: termStream("net gain of the force") }, phrase, 2).mentions).toBe(0);
  });

  it("answer 'no net force' from Newton's first law (net external force)", () => {
    expect(reads("pia", "What happens to a moving object when no net force acts on it?")).toEqual([
      "ph110.newtons-first-law",
    ]);
  });
});

describe("acronyms from note text", () => {
  it("read a defined acronym and the initials of three or four content words standing together", () => {
    const found = textAcronymsOf(
      "Logs use write-ahead logging (WAL). Each page stores the log sequence number of it.",
      new Set(),
    );
    expect(found.get("wal")).toBe("write ahead logging");
    expect(found.get("lsn")).toBe("log sequence number");
    // Runs break at stop words and punctuation, and words the notes use are no acronyms.
    expect(found.has("sno")).toBe(false);
    expect(textAcronymsOf("page stores the log sequence number", new Set(["lsn"])).has("lsn")).toBe(false);
  });

  it("answer the LSN question from the crash-recovery note", () => {
    expect(reads("bob", "What is the LSN stored on each page used for?")).toEqual(["db201.crash-recovery"]);
  });
});

describe("the remaining paraphrases", () => {
  it("count a repeated concept once", () => {
    const concepts = conceptsOf("push wall wall push back", expansionsFor([], NO_SYNONYMS));
    expect(concepts.filter((concept) => concept.words === "wall")).toHaveLength(1);
  });

  it("read 'the point of' and 'what causes' as asking words", () => {
    expect(reads("alice", "What is the point of a reranker?")).toEqual(["cs301.reranking"]);
    expect(reads("alice", "What causes exploding gradients?")).toEqual(["cs301.backpropagation"]);
  });

  it("answer plain-English wordings through the course's synonym data", () => {
    expect(reads("pia", "If I push on a wall, does the wall push back on me?")).toEqual(["ph110.newtons-third-law"]);
    expect(reads("alice", "How do I get a model with sparse weights?")).toEqual(["cs301.l1-regularization"]);
    expect(reads("alice", "How does a transformer weigh each key against a query?")).not.toContain(
      "cs301.encoder-decoder-attention",
    );
  });
});
