/**
 * The retrieval suite (eval/retrieval/): the labelled set is large and
 * varied enough, its labels name real notes, the planner never cites a note
 * of another course or one the asker may not read, the fixed workflow reads
 * what the rules planner reads, and the shipped cut-offs are the ones the
 * suite calibrates. Pure (reads the eval corpus).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { CALIBRATION_QUESTIONS } from "../../eval/retrieval/calibration.js";
import { calibrate, figures, isFalseAnswer } from "../../eval/retrieval/metrics.js";
import { FRESH_QUESTIONS } from "../../eval/retrieval/fresh.js";
import { HELD_OUT_QUESTIONS } from "../../eval/retrieval/heldout.js";
import { HELD_OUT_2_QUESTIONS } from "../../eval/retrieval/heldout2.js";
import { KINDS, QUESTIONS } from "../../eval/retrieval/questions.js";
import { CHOICES, SHIPPED } from "../../eval/retrieval/report.js";
import { loadFixture, runAll, type Fixture, type RetrievalRun } from "../../eval/retrieval/run.js";
import { canRead } from "../../tools/notes/corpus.js";

let fixture: Fixture;
let runs: RetrievalRun[];

beforeAll(async () => {
  fixture = await loadFixture();
  runs = runAll(fixture, CALIBRATION_QUESTIONS);
});

describe("the labelled set", () => {
  it("has at least 120 questions over the three courses, every kind, and unique ids", () => {
    expect(QUESTIONS.length).toBeGreaterThanOrEqual(120);
    expect(new Set(QUESTIONS.map((question) => question.id)).size).toBe(QUESTIONS.length);
    expect(new Set(QUESTIONS.map((question) => question.kind))).toEqual(new Set(KINDS));
    for (const course of ["cs301", "db201", "ph110"]) {
      const mine = QUESTIONS.filter((question) => question.course === course);
      expect(mine.some((question) => question.answers === "abstain")).toBe(true);
      expect(mine.some((question) => question.answers !== "abstain")).toBe(true);
    }
  });

  it("has a calibration set of the labelled, fresh and first held-out questions", () => {
    expect(CALIBRATION_QUESTIONS).toEqual([...QUESTIONS, ...FRESH_QUESTIONS, ...HELD_OUT_QUESTIONS]);
    expect(HELD_OUT_QUESTIONS.length).toBeGreaterThanOrEqual(40);
  });

  it("has an untuned second held-out set of at least 45 questions, 15 per course, answerable and must-abstain in each", () => {
    expect(HELD_OUT_2_QUESTIONS.length).toBeGreaterThanOrEqual(45);
    for (const course of ["cs301", "db201", "ph110"]) {
      const mine = HELD_OUT_2_QUESTIONS.filter((question) => question.course === course);
      expect(mine.length).toBeGreaterThanOrEqual(15);
      expect(mine.some((question) => question.answers === "abstain")).toBe(true);
      expect(mine.some((question) => question.answers !== "abstain")).toBe(true);
    }
    const kinds = new Set(HELD_OUT_2_QUESTIONS.map((question) => question.kind));
    for (const kind of [
      "paraphrase",
      "synonym",
      "acronym",
      "formula",
      "wrong-course",
      "unreleased",
      "absent",
      "out-of-scope",
    ])
      expect(kinds.has(kind as (typeof KINDS)[number]), kind).toBe(true);
  });

  it("labels only notes that exist and that the asker may read, in the calibration and second held-out sets", () => {
    const all = [...CALIBRATION_QUESTIONS, ...HELD_OUT_2_QUESTIONS];
    expect(new Set(all.map((question) => question.id)).size).toBe(all.length);
    for (const question of all) {
      const labelled = [...(question.answers === "abstain" ? [] : question.answers), ...(question.related ?? [])];
      for (const id of labelled) {
        const note = fixture.index.byId.get(id);
        expect(note, `${question.id}: ${id}`).toBeDefined();
        if (note) expect(canRead(fixture.principal(question.user), note), `${question.id}: ${id}`).toBe(true);
      }
    }
  });
});

describe("the planner on it", () => {
  it("never cites a note of another course than the one asked, nor one the asker may not read", () => {
    for (const run of runs) {
      const principal = fixture.principal(run.question.user);
      for (const id of run.cited) {
        const note = fixture.index.byId.get(id);
        expect(note && canRead(principal, note), `${run.question.id}: ${id}`).toBe(true);
      }
      if (run.question.kind === "wrong-course" || run.question.kind === "out-of-scope") expect(run.cited).toEqual([]);
    }
  });

  it("gives no false answer on the calibration set: no question that must abstain is answered, no unlabelled note cited", () => {
    const wrong = runs.filter((run) => isFalseAnswer(run.question, run.cited));
    expect(wrong.map((run) => `${run.question.id}: ${run.cited.join(", ")}`)).toEqual([]);
  });

  it("reads the same notes in the fixed workflow as in the rules planner", () => {
    const differing = runs.filter((run) => run.query !== undefined && run.cited.join(" ") !== run.workflow.join(" "));
    expect(differing.map((run) => run.question.id)).toEqual([]);
  });

  it("ships the cut-offs the suite calibrates", () => {
    expect(calibrate(runs, CHOICES)).toEqual(SHIPPED);
  });

  it("counts a refusal of an answerable question as a false abstention and an extra citation as a false answer", () => {
    const answerable = QUESTIONS.find((question) => question.answers !== "abstain");
    if (!answerable || answerable.answers === "abstain") throw new Error("no answerable question");
    expect(figures([{ question: answerable, cited: [] }])).toMatchObject({ falseAbstentions: 1, falseAnswers: 0 });
    expect(figures([{ question: answerable, cited: [...answerable.answers, "cs301.none"] }])).toMatchObject({
      falseAbstentions: 0,
      falseAnswers: 1,
      recallAt3: 1,
    });
  });
});
