/**
 * The retrieval suite's part of `npm run eval`: runs the calibration set
 * (calibration.ts: the labelled, fresh and first held-out questions) and the
 * untuned second held-out set (heldout2.ts) through the rules planner
 * (run.ts), and renders the figures per course and overall as a Markdown
 * section of report.md and as retrieval.svg, with the calibration sweep, a
 * two-fold check of the threshold, the figures without the synonym table,
 * the second held-out set before and after, and every miss.
 */
import { barChart } from "../charts.js";
import {
  CLEAR_FLOOR,
  CLEAR_MARGIN,
  NEAR_BEST,
  ON_TOPIC,
  type CutoffChoice,
} from "../../src/domains/notes/retrieval.js";
import { TITLE_SHARE } from "../../tools/notes/search.js";
import { NO_SYNONYMS } from "../../tools/notes/corpus.js";
import {
  calibrate,
  COURSES,
  FALSE_ANSWER_COST,
  figures,
  figuresByCourse,
  isFalseAnswer,
  sweep,
  type Figures,
} from "./metrics.js";
import { CALIBRATION_QUESTIONS } from "./calibration.js";
import { FRESH_QUESTIONS } from "./fresh.js";
import { HELD_OUT_QUESTIONS } from "./heldout.js";
import { HELD_OUT_2_BEFORE, HELD_OUT_2_QUESTIONS } from "./heldout2.js";
import { KINDS, QUESTIONS } from "./questions.js";
import { loadFixture, runAll, type RetrievalRun } from "./run.js";

/** The targets of issue 27. */
export const TARGETS = { falseAbstentionRate: 0.05, recallAt3: 0.9, falseAnswerRate: 0 } as const;

const steps = (from: number, to: number, step: number) =>
  Array.from(
    { length: Math.round((to - from) / step) + 1 },
    (_, index) => Math.round((from + index * step) * 100) / 100,
  );

/** The second held-out set as first measured (heldout2.ts), as figures. */
const HELD_OUT_2_BEFORE_FIGURES: Figures = {
  questions: HELD_OUT_2_BEFORE.questions,
  answerable: HELD_OUT_2_BEFORE.answerable,
  mustAbstain: HELD_OUT_2_BEFORE.questions - HELD_OUT_2_BEFORE.answerable,
  recallAt3: HELD_OUT_2_BEFORE.recallAt3,
  falseAbstentions: HELD_OUT_2_BEFORE.falseAbstentions,
  falseAbstentionRate: HELD_OUT_2_BEFORE.falseAbstentions / HELD_OUT_2_BEFORE.answerable,
  falseAnswers: HELD_OUT_2_BEFORE.falseAnswers,
  falseAnswerRate: HELD_OUT_2_BEFORE.falseAnswers / HELD_OUT_2_BEFORE.questions,
};

/** A full choice of the cut-offs the calibration sets. */
export type Choice = Required<CutoffChoice>;

/** The thresholds the single-threshold table shows. */
export const GRID = steps(0.2, 0.8, 0.05);

/**
 * The cut-offs the calibration tries, the more cautious last in each
 * dimension (a higher threshold, floor, margin and near-best share).
 */
export const CHOICES: Choice[] = GRID.filter((onTopic) => onTopic >= 0.3).flatMap((onTopic) =>
  steps(0.15, 0.45, 0.05).flatMap((clearFloor) =>
    [1.5, 2, 2.5, 3, Number.POSITIVE_INFINITY].flatMap((clearMargin) =>
      [0.85, 0.9, 0.95, 1].map((nearBest) => ({ onTopic, clearFloor, clearMargin, nearBest })),
    ),
  ),
);

/** The cut-offs the planner ships (src/domains/notes/retrieval.ts). */
export const SHIPPED: Choice = {
  onTopic: ON_TOPIC,
  clearFloor: CLEAR_FLOOR,
  clearMargin: CLEAR_MARGIN,
  nearBest: NEAR_BEST,
};

const describe = (choice: Choice | undefined) =>
  choice === undefined
    ? "none"
    : `threshold ${choice.onTopic}, clear winner ≥ ${choice.clearFloor} and ≥ ${choice.clearMargin}× the next, ` +
      `near-best ${choice.nearBest}`;

export interface RetrievalSuite {
  runs: RetrievalRun[];
  byCourse: ReturnType<typeof figuresByCourse>;
  withoutSynonyms: Figures;
  /** The figures on the second held-out set (heldout2.ts), written before the third round and never tuned on. */
  heldOut2: Figures;
  calibrated: Choice | undefined;
  twoFold: { calibratedOn: string; choice: Choice | undefined; onItself: Figures; heldOut: Figures }[];
  workflowAgrees: number;
  markdown: string;
  svg: string;
}

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;

function row(name: string, f: Figures): string {
  const abstentions = `${percent(f.falseAbstentionRate)} (${f.falseAbstentions})`;
  const answers = `${percent(f.falseAnswerRate)} (${f.falseAnswers})`;
  return `| ${name} | ${f.questions} | ${f.answerable} | ${f.mustAbstain} | ${percent(f.recallAt3)} | ${abstentions} | ${answers} |`;
}

const TABLE_HEAD = [
  "| set | questions | answerable | must abstain | recall@3 | false abstention | false answer |",
  "|---|---|---|---|---|---|---|",
];

function met(f: Figures): string {
  const checks = [
    [`recall@3 ≥ ${percent(TARGETS.recallAt3)}`, f.recallAt3 >= TARGETS.recallAt3],
    [
      `false abstention ≤ ${percent(TARGETS.falseAbstentionRate)}`,
      f.falseAbstentionRate <= TARGETS.falseAbstentionRate,
    ],
    [`false answer = 0%`, f.falseAnswers === 0],
  ] as const;
  return checks.map(([name, ok]) => `${name}: **${ok ? "met" : "not met"}**`).join("; ");
}

function miss(run: RetrievalRun): string | undefined {
  const question = run.question;
  const expected = question.answers === "abstain" ? "abstain" : question.answers.join(", ");
  const got = run.cited.length > 0 ? run.cited.join(", ") : run.ending;
  if (isFalseAnswer(question, run.cited))
    return `| ${question.id} | false answer | ${question.question} | ${expected} | ${got} |`;
  if (question.answers !== "abstain" && run.cited.length === 0)
    return `| ${question.id} | false abstention | ${question.question} | ${expected} | ${got} |`;
  return undefined;
}

/** What the calibration set's figures do not show. */
const CAVEAT = [
  "Caveat: each part of the calibration set was written before the tuning that then looked at it, but the synonym table",
  "(its course groups and its common plain-English pairs), the asking-word list, the title share, the weight of words no",
  "note has, the two-concept rule, the full-coverage unit, the phrase, gap and compound rules, one-letter variables and",
  "acronyms from note text were all chosen by looking at its misses, so its figures are optimistic; the two-fold halves",
  "guard the cut-offs only. The second held-out set is the estimate for phrasings the tuning never saw.",
].join(" ");

/** Runs the suite and renders it. */
export async function runRetrievalSuite(): Promise<RetrievalSuite> {
  const fixture = await loadFixture();
  const runs = runAll(fixture, CALIBRATION_QUESTIONS);
  const bare = runAll(await loadFixture(NO_SYNONYMS), CALIBRATION_QUESTIONS);
  const part = (questions: readonly { id: string }[]) => {
    const ids = new Set(questions.map((question) => question.id));
    return figures(runs.filter((run) => ids.has(run.question.id)));
  };
  const heldOut2Runs = runAll(fixture, HELD_OUT_2_QUESTIONS);
  const heldOut2 = figures(heldOut2Runs);
  const heldOut2ByCourse = figuresByCourse(heldOut2Runs);
  const byCourse = figuresByCourse(runs);
  const withoutSynonyms = figures(bare);
  const calibrated = calibrate(runs, CHOICES);
  const halves = [runs.filter((_, index) => index % 2 === 0), runs.filter((_, index) => index % 2 === 1)];
  const twoFold = [0, 1].map((fold) => {
    const choice = calibrate(halves[fold] ?? [], CHOICES);
    const measure = (set: readonly RetrievalRun[]) =>
      choice === undefined ? figures([]) : (sweep(set, [choice])[0]?.figures ?? figures([]));
    return {
      calibratedOn: fold === 0 ? "even" : "odd",
      choice,
      onItself: measure(halves[fold] ?? []),
      heldOut: measure(halves[1 - fold] ?? []),
    };
  });
  const workflowAgrees = runs.filter((run) => run.cited.join(" ") === run.workflow.join(" ")).length;
  const sweepRows = sweep(
    runs,
    GRID.map((onTopic) => ({ ...SHIPPED, onTopic })),
  );
  const kinds = KINDS.map((kind) => ({ kind, f: figures(runs.filter((run) => run.question.kind === kind)) })).filter(
    (entry) => entry.f.questions > 0,
  );
  const misses = runs.map(miss).filter((line): line is string => line !== undefined);
  const heldOut2Misses = heldOut2Runs.map(miss).filter((line): line is string => line !== undefined);
  const overall = byCourse.overall;
  const markdown = [
    "## Retrieval: the rules planner on a labelled question set",
    "",
    [
      `${CALIBRATION_QUESTIONS.length} calibration questions as students ask them (\`eval/retrieval/calibration.ts\`: \`questions.ts\`,`,
      `\`fresh.ts\`, \`heldout.ts\`) and ${HELD_OUT_2_QUESTIONS.length} untuned ones (\`heldout2.ts\`),`,
      `each labelled with the notes that answer it (and notes that also cover it, which may be cited) or "must abstain": paraphrases,`,
      `synonyms, acronyms, formulas, another course's topics, unreleased notes, topics no note covers, out-of-scope requests.`,
      `Each goes through the rules planner's own \`decide\` with the notes server's search run in process as the asker`,
      `(\`eval/retrieval/run.ts\`): not a simulation, and no model.`,
      `Corpus \`eval/fixtures/notes.json\`, synonyms \`tools/notes/data/synonyms.json\`.`,
      `*recall@3*: share of a question's answering notes among the ≤ 3 it reads and cites (answerable questions).`,
      `*False abstention*: answerable but refused.`,
      `*False answer*: answered though it must abstain, or citing a note not labelled as covering it (share of all questions).`,
    ].join(" "),
    "",
    ...TABLE_HEAD,
    ...COURSES.map((course) => row(course, byCourse[course])),
    row("**calibration overall**", overall),
    row("of which labelled (questions.ts)", part(QUESTIONS)),
    row("of which fresh (fresh.ts, merged: seen)", part(FRESH_QUESTIONS)),
    row("of which first held-out (heldout.ts, merged: seen)", part(HELD_OUT_QUESTIONS)),
    row("calibration without the synonym table", withoutSynonyms),
    row(`*second held-out set, before (commit ${HELD_OUT_2_BEFORE.commit})*`, HELD_OUT_2_BEFORE_FIGURES),
    row("*second held-out set, after: never tuned on*", heldOut2),
    ...COURSES.map((course) => row(`second held-out set after, ${course}`, heldOut2ByCourse[course])),
    "",
    [
      `**Which set calibrates what.** The *calibration set* (per course and overall above) is every question the tuning has seen:`,
      `the labelled set, the fresh set and the first held-out set,`,
      `the last two merged in once their misses had been read and fixed (issue 27, third round).`,
      `The cut-offs, the synonym table and the search's constants were chosen on it, so its figures are optimistic.`,
      `The *second held-out set* (\`eval/retrieval/heldout2.ts\`, ${HELD_OUT_2_QUESTIONS.length} questions, every kind,`,
      `at least 15 per course) was written and committed before the third round's changes,`,
      `measured once before them (commit ${HELD_OUT_2_BEFORE.commit}) and once after, and never tuned on:`,
      `it is the honest estimate for new phrasings.`,
      `Targets on it after: ${met(heldOut2)}.`,
    ].join(" "),
    "",
    `Targets (issue 27) on the calibration set: ${met(overall)}.`,
    "",
    "![retrieval figures](retrieval.svg)",
    "",
    [
      "**How the cut-offs are decided** (`src/domains/notes/retrieval.ts`):",
      `a permitted note is evidence when its score reaches the threshold ON_TOPIC = ${ON_TOPIC},`,
      `or when it is a *clear winner* (score ≥ CLEAR_FLOOR = ${CLEAR_FLOOR}`,
      `and ≥ CLEAR_MARGIN = ${CLEAR_MARGIN} × the next permitted note's score: a per-question, relative test,`,
      "so a paraphrase whose extra words lower every note alike is still answered from the one note that stands out);",
      `of the evidence, notes under NEAR_BEST = ${NEAR_BEST} × the best score are not read.`,
      "A note's score is the IDF-weighted share of the question's concepts it covers,",
      `${TITLE_SHARE * 100}% of it from its title naming them (\`tools/notes/search.ts\`).`,
      `The four cut-offs are calibrated jointly over a grid of ${CHOICES.length} choices by the lowest cost`,
      `(a false answer counts as ${FALSE_ANSWER_COST} false abstentions),`,
      "then the fewest false answers, then recall, then the more cautious choice.",
      `Calibrated on all the questions: ${describe(calibrated)} (shipped: ${describe(SHIPPED)}).`,
    ].join(" "),
    "",
    [
      "Two-fold check of the cut-offs, within the calibration set:",
      "the cut-offs calibrated on one half of its questions (even or odd position in the list),",
      "measured on that half and on the other half, which that calibration never saw:",
    ].join(" "),
    "",
    "| calibrated on | cut-offs | recall@3 (own half / other half) | false abstention | false answer |",
    "|---|---|---|---|---|",
    ...twoFold.map((fold) => {
      /** A rate on the half the cut-offs were calibrated on, then on the other half. */
      const halves = (rate: "recallAt3" | "falseAbstentionRate" | "falseAnswerRate") =>
        `${percent(fold.onItself[rate])} / ${percent(fold.heldOut[rate])}`;
      const cut = describe(fold.choice);
      const rates = `${halves("recallAt3")} | ${halves("falseAbstentionRate")} | ${halves("falseAnswerRate")}`;
      return `| ${fold.calibratedOn} questions | ${cut} | ${rates} |`;
    }),
    "",
    `The fixed workflow reads the same notes as the rules planner for ${workflowAgrees}/${runs.length} questions ` +
      "(same retrieval: `retrieveFor`).",
    "",
    CAVEAT,
    "",
    `Single-threshold sweep (the other cut-offs as shipped):`,
    "",
    "| threshold | recall@3 | false abstention | false answer |",
    "|---|---|---|---|",
    ...sweepRows.map((entry) => {
      const threshold = `${entry.choice.onTopic}${entry.choice.onTopic === ON_TOPIC ? " (shipped)" : ""}`;
      const f = entry.figures;
      return `| ${threshold} | ${percent(f.recallAt3)} | ${percent(f.falseAbstentionRate)} | ${percent(f.falseAnswerRate)} |`;
    }),
    "",
    "By kind of question:",
    "",
    "| kind | questions | recall@3 | false abstention | false answer |",
    "|---|---|---|---|---|",
    ...kinds.map(({ kind, f }) => {
      const recall = f.answerable > 0 ? percent(f.recallAt3) : "–";
      const abstentions = f.answerable > 0 ? `${f.falseAbstentions}/${f.answerable}` : "–";
      return `| ${kind} | ${f.questions} | ${recall} | ${abstentions} | ${f.falseAnswers}/${f.questions} |`;
    }),
    "",
    ...(misses.length === 0
      ? ["No question was missed."]
      : ["Every miss:", "", "| id | miss | question | labelled | planner read |", "|---|---|---|---|---|", ...misses]),
    "",
    ...(heldOut2Misses.length === 0
      ? ["No question of the second held-out set was missed."]
      : [
          "Every miss of the second held-out set (after):",
          "",
          "| id | miss | question | labelled | planner read |",
          "|---|---|---|---|---|",
          ...heldOut2Misses,
        ]),
    "",
  ].join("\n");
  const groups = [...COURSES, "calibration overall", "held-out 2 before", "held-out 2 after (untuned)"] as const;
  const of = (group: (typeof groups)[number]) =>
    group === "held-out 2 before"
      ? HELD_OUT_2_BEFORE_FIGURES
      : group === "held-out 2 after (untuned)"
        ? heldOut2
        : byCourse[group === "calibration overall" ? "overall" : group];
  const svg = barChart({
    title:
      "Retrieval, rules planner: calibration set per course and overall; second held-out set before and after (untuned)",
    groups,
    series: [
      { configuration: "recall@3 (target ≥ 90%)", simulated: false },
      { configuration: "false abstention (target ≤ 5%)", simulated: false },
      { configuration: "false answer (target 0%)", simulated: false },
    ],
    values: [
      groups.map((group) => of(group).recallAt3),
      groups.map((group) => of(group).falseAbstentionRate),
      groups.map((group) => of(group).falseAnswerRate),
    ],
    format: (value) => `${Math.round(value * 100)}%`,
    axisMax: 1,
  });
  return { runs, byCourse, withoutSynonyms, heldOut2, calibrated, twoFold, workflowAgrees, markdown, svg };
}
