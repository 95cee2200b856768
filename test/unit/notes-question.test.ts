/**
 * What counts as evidence for a notes question (src/domains/notes/question.ts,
 * relevance.ts): the named course only, and hits on the asked topic — named
 * by the title, or covered word for word by the text — not hits that share
 * one word of the question in passing. Pure.
 */
import { describe, expect, it } from "vitest";
import { cannotFind, notesQuestion, supports } from "../../src/domains/notes/question.js";
import { contentTerms, isOnTopic } from "../../src/domains/notes/relevance.js";

const hit = (note_id: string, title: string, snippet: string) => ({ note_id, title, snippet });

describe("notesQuestion", () => {
  it("reads the query, the named course and the topic without the course code", () => {
    expect(notesQuestion("What do my db201 notes say about two-phase locking?")).toEqual({
      query: "db201 two-phase locking",
      course: "db201",
      topic: "two-phase locking",
    });
    expect(notesQuestion("Show me the exam 2 worked solutions")).toEqual({
      query: "exam worked solutions",
      course: undefined,
      topic: "exam worked solutions",
    });
  });
});

describe("isOnTopic", () => {
  const terms = contentTerms("exam worked solutions");

  it("takes a hit whose title names a word of the question", () => {
    expect(isOnTopic(hit("cs301.exam-2", "Exam 2 solutions", "Problem 1."), terms)).toBe(true);
  });

  it("takes a hit whose text has every word of the question", () => {
    expect(isOnTopic(hit("cs301.x", "Past papers", "The worked solutions of each exam."), terms)).toBe(true);
  });

  it("refuses a hit that shares some words in passing, and one that shares none", () => {
    expect(
      isOnTopic(
        hit("cs301.tips", "Revision tips for the attention unit", "redo the worked examples before the exam"),
        terms,
      ),
    ).toBe(false);
    expect(isOnTopic(hit("cs301.l2", "L2 regularization", "ridge regression has a closed-form solution"), terms)).toBe(
      false,
    );
  });

  it("reads a hyphenated word by its parts: a title sharing only one part does not name it", () => {
    const compare = contentTerms("self-attention cross-attention");
    expect(isOnTopic(hit("cs301.cross-entropy-loss", "Cross-entropy loss", "negative log-probability"), compare)).toBe(
      false,
    );
    expect(isOnTopic(hit("cs301.cross-attention", "Cross attention", "queries from one sequence"), compare)).toBe(true);
  });

  it("takes nothing for a question with no content words", () => {
    expect(isOnTopic(hit("cs301.x", "What", "what is it"), contentTerms("what is it?"))).toBe(false);
  });
});

describe("supports", () => {
  it("takes only notes of the course the question names", () => {
    const question = notesQuestion("What do my db201 notes say about two-phase locking?");
    expect(supports(question, hit("cs301.locking", "Two-phase locking", "two-phase locking"))).toBe(false);
    expect(
      supports(question, hit("db201.two-phase-locking", "Two-phase locking", "growing and shrinking phases")),
    ).toBe(true);
  });
});

describe("cannotFind", () => {
  it("abstains naming the topic and the course, citing nothing", () => {
    expect(cannotFind(notesQuestion("What do my db201 notes say about two-phase locking?"))).toEqual({
      type: "final",
      answer: `I can't find notes on "two-phase locking" in db201 that you can read, so I won't answer from unrelated notes.`,
      citations: [],
      abstained: true,
    });
  });
});
