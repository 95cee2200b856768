/**
 * The retrieval figures: recall@3 (share of a question's answering notes
 * among the ≤ 3 it cites, answerable questions only), the false-abstention
 * rate (answerable but refused) and the false-answer rate (answered though it
 * must abstain, or citing a note not labelled as covering it), per course and
 * overall; and the calibration sweep that re-decides every question at other
 * thresholds on the same search hits. Pure.
 */
import { inCourse, notesQuestion } from "../../src/domains/notes/question.js";
import { cutoffsFor, retrieve, type CutoffChoice } from "../../src/domains/notes/retrieval.js";
import type { LabelledQuestion } from "./questions.js";
import type { RetrievalRun } from "./run.js";

export const AT_K = 3;

export interface Figures {
  questions: number;
  answerable: number;
  mustAbstain: number;
  recallAt3: number;
  falseAbstentions: number;
  falseAbstentionRate: number;
  falseAnswers: number;
  falseAnswerRate: number;
}

/** Whether an outcome is a false answer: any answer to a must-abstain question, or one citing a note not labelled. */
export function isFalseAnswer(question: LabelledQuestion, cited: readonly string[]): boolean {
  if (cited.length === 0) return false;
  if (question.answers === "abstain") return true;
  const allowed = new Set([...question.answers, ...(question.related ?? [])]);
  return cited.some((id) => !allowed.has(id));
}

function recall(question: LabelledQuestion, cited: readonly string[]): number {
  if (question.answers === "abstain") return 0;
  const top = new Set(cited.slice(0, AT_K));
  return question.answers.filter((id) => top.has(id)).length / Math.min(question.answers.length, AT_K);
}

/** The figures over a set of (question, cited notes) outcomes. */
export function figures(outcomes: readonly { question: LabelledQuestion; cited: readonly string[] }[]): Figures {
  const answerable = outcomes.filter((outcome) => outcome.question.answers !== "abstain");
  const falseAbstentions = answerable.filter((outcome) => outcome.cited.length === 0).length;
  const falseAnswers = outcomes.filter((outcome) => isFalseAnswer(outcome.question, outcome.cited)).length;
  const recallSum = answerable.reduce((sum, outcome) => sum + recall(outcome.question, outcome.cited), 0);
  return {
    questions: outcomes.length,
    answerable: answerable.length,
    mustAbstain: outcomes.length - answerable.length,
    recallAt3: answerable.length === 0 ? 1 : recallSum / answerable.length,
    falseAbstentions,
    falseAbstentionRate: answerable.length === 0 ? 0 : falseAbstentions / answerable.length,
    falseAnswers,
    falseAnswerRate: outcomes.length === 0 ? 0 : falseAnswers / outcomes.length,
  };
}

export const COURSES = ["cs301", "db201", "ph110"] as const;

/** Figures per course and overall. */
export function figuresByCourse(
  outcomes: readonly { question: LabelledQuestion; cited: readonly string[] }[],
): Record<(typeof COURSES)[number] | "overall", Figures> {
  const of = (course: string) => figures(outcomes.filter((outcome) => outcome.question.course === course));
  return { cs301: of("cs301"), db201: of("db201"), ph110: of("ph110"), overall: figures(outcomes) };
}

/** What the planner would cite at other cut-offs, re-deciding on the same hits (questions it never searched stay as they were). */
export function citedAt(run: RetrievalRun, choice: CutoffChoice): string[] {
  if (run.query === undefined) return run.cited;
  const question = notesQuestion(run.question.question);
  const retrieval = retrieve(
    run.hits,
    (hit) => inCourse(question, hit),
    () => false,
    AT_K,
    cutoffsFor(run.question.question, choice),
  );
  return retrieval.type === "answer" ? retrieval.note_ids : [];
}

/** The figures at each choice of cut-offs. */
export function sweep<C extends CutoffChoice>(runs: readonly RetrievalRun[], choices: readonly C[]) {
  return choices.map((choice) => ({
    choice,
    figures: figures(runs.map((run) => ({ question: run.question, cited: citedAt(run, choice) }))),
  }));
}

/** A false answer costs this many false abstentions: a wrong answer misleads, a refusal names the closest notes. */
export const FALSE_ANSWER_COST = 2;

const cost = (f: Figures) => FALSE_ANSWER_COST * f.falseAnswers + f.falseAbstentions;

/**
 * The calibrated cut-offs on a set: the lowest cost (false answers weighted
 * by {@link FALSE_ANSWER_COST}, plus false abstentions), then the fewest false
 * answers, then the higher recall, then the more cautious choice (higher
 * threshold, floor and margin: the first such in the grid's order when the
 * grid lists cautious choices last).
 */
export function calibrate<C extends CutoffChoice>(runs: readonly RetrievalRun[], choices: readonly C[]): C | undefined {
  const rows = sweep(runs, choices).map((row, order) => ({ ...row, order }));
  rows.sort(
    (left, right) =>
      cost(left.figures) - cost(right.figures) ||
      left.figures.falseAnswers - right.figures.falseAnswers ||
      right.figures.recallAt3 - left.figures.recallAt3 ||
      right.order - left.order,
  );
  return rows[0]?.choice;
}
