/**
 * The retrieval suite's part of `npm run eval`: runs the labelled set
 * (questions.ts) through the rules planner (run.ts), and renders the figures
 * per course and overall as a Markdown section of report.md and as
 * retrieval.svg, with the calibration sweep, a two-fold check of the
 * threshold, the figures without the synonym table, and every miss.
 */
import { barChart } from "../charts.js";
import { ON_TOPIC, NEAR_BEST } from "../../src/domains/notes/retrieval.js";
import { NO_SYNONYMS } from "../../tools/notes/corpus.js";
import { calibrate, COURSES, figures, figuresByCourse, isFalseAnswer, sweep, type Figures } from "./metrics.js";
import { KINDS, QUESTIONS } from "./questions.js";
import { loadFixture, runAll, type RetrievalRun } from "./run.js";

/** The targets of issue 27. */
export const TARGETS = { falseAbstentionRate: 0.05, recallAt3: 0.9, falseAnswerRate: 0 } as const;

/** The thresholds the calibration tries. */
export const GRID = Array.from({ length: 13 }, (_, index) => Math.round((0.2 + index * 0.05) * 100) / 100);

export interface RetrievalSuite {
  runs: RetrievalRun[];
  byCourse: ReturnType<typeof figuresByCourse>;
  withoutSynonyms: Figures;
  calibrated: number;
  twoFold: { calibratedOn: string; threshold: number; figures: Figures }[];
  workflowAgrees: number;
  markdown: string;
  svg: string;
}

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;

function row(name: string, f: Figures): string {
  return `| ${name} | ${f.questions} | ${f.answerable} | ${f.mustAbstain} | ${percent(f.recallAt3)} | ${percent(f.falseAbstentionRate)} (${f.falseAbstentions}) | ${percent(f.falseAnswerRate)} (${f.falseAnswers}) |`;
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

/** Runs the suite and renders it. */
export async function runRetrievalSuite(): Promise<RetrievalSuite> {
  const runs = runAll(await loadFixture(), QUESTIONS);
  const bare = runAll(await loadFixture(NO_SYNONYMS), QUESTIONS);
  const byCourse = figuresByCourse(runs);
  const withoutSynonyms = figures(bare);
  const calibrated = calibrate(runs, GRID, NEAR_BEST);
  const halves = [runs.filter((_, index) => index % 2 === 0), runs.filter((_, index) => index % 2 === 1)];
  const twoFold = [0, 1].map((fold) => {
    const threshold = calibrate(halves[fold] ?? [], GRID, NEAR_BEST);
    const other = halves[1 - fold] ?? [];
    const rows = sweep(other, [threshold], NEAR_BEST);
    return { calibratedOn: fold === 0 ? "even" : "odd", threshold, figures: rows[0]?.figures ?? figures([]) };
  });
  const workflowAgrees = runs.filter((run) => run.cited.join(" ") === run.workflow.join(" ")).length;
  const sweepRows = sweep(runs, GRID, NEAR_BEST);
  const kinds = KINDS.map((kind) => ({ kind, f: figures(runs.filter((run) => run.question.kind === kind)) })).filter(
    (entry) => entry.f.questions > 0,
  );
  const misses = runs.map(miss).filter((line): line is string => line !== undefined);
  const overall = byCourse.overall;
  const markdown = [
    "## Retrieval: the rules planner on a labelled question set",
    "",
    `${QUESTIONS.length} questions as students ask them (\`eval/retrieval/questions.ts\`), each labelled with the notes that answer it (and notes that also cover it, which may be cited) or "must abstain": paraphrases, synonyms, acronyms, formulas, another course's topics, unreleased notes, topics no note covers, out-of-scope requests. Each goes through the rules planner's own \`decide\` with the notes server's search run in process as the asker (\`eval/retrieval/run.ts\`): not a simulation, and no model. Corpus \`eval/fixtures/notes.json\`, synonyms \`tools/notes/data/synonyms.json\`. *recall@3*: share of a question's answering notes among the ≤ 3 it reads and cites (answerable questions). *False abstention*: answerable but refused. *False answer*: answered though it must abstain, or citing a note not labelled as covering it (share of all questions).`,
    "",
    ...TABLE_HEAD,
    ...COURSES.map((course) => row(course, byCourse[course])),
    row("**overall**", overall),
    row("overall without the synonym table", withoutSynonyms),
    "",
    `Targets (issue 27): ${met(overall)}.`,
    "",
    "![retrieval figures](retrieval.svg)",
    "",
    `Shipped threshold ON_TOPIC = ${ON_TOPIC} (a hit is evidence at that calibrated score; notes under ${NEAR_BEST} × the best hit's score are not read; \`src/domains/notes/retrieval.ts\`). Calibrated on this set (lowest cost, a false answer counting as two false abstentions, then the higher threshold): **${calibrated}**. Two-fold check (calibrate on half the questions, measure on the other half): ${twoFold.map((fold) => `calibrated on the ${fold.calibratedOn} questions → ${fold.threshold}, on the others recall@3 ${percent(fold.figures.recallAt3)}, false abstention ${percent(fold.figures.falseAbstentionRate)}, false answer ${percent(fold.figures.falseAnswerRate)}`).join("; ")}. The fixed workflow reads the same notes as the rules planner for ${workflowAgrees}/${runs.length} questions (same retrieval: \`retrieveFor\`).`,
    "",
    "Caveat: the questions were written before the search was tuned, but the synonym table, the full-coverage unit and the near-best cut-off were then chosen by looking at these questions, so these figures are optimistic for phrasings not in the set.",
    "",
    "| threshold | recall@3 | false abstention | false answer |",
    "|---|---|---|---|",
    ...sweepRows.map(
      (entry) =>
        `| ${entry.threshold}${entry.threshold === ON_TOPIC ? " (shipped)" : ""} | ${percent(entry.figures.recallAt3)} | ${percent(entry.figures.falseAbstentionRate)} | ${percent(entry.figures.falseAnswerRate)} |`,
    ),
    "",
    "By kind of question:",
    "",
    "| kind | questions | recall@3 | false abstention | false answer |",
    "|---|---|---|---|---|",
    ...kinds.map(
      ({ kind, f }) =>
        `| ${kind} | ${f.questions} | ${f.answerable > 0 ? percent(f.recallAt3) : "–"} | ${f.answerable > 0 ? `${f.falseAbstentions}/${f.answerable}` : "–"} | ${f.falseAnswers}/${f.questions} |`,
    ),
    "",
    ...(misses.length === 0
      ? ["No question was missed."]
      : ["Every miss:", "", "| id | miss | question | labelled | planner read |", "|---|---|---|---|---|", ...misses]),
    "",
  ].join("\n");
  const groups = [...COURSES, "overall"] as const;
  const svg = barChart({
    title: "Retrieval on the labelled set (rules planner)",
    groups,
    series: [
      { configuration: "recall@3 (target ≥ 90%)", simulated: false },
      { configuration: "false abstention (target ≤ 5%)", simulated: false },
      { configuration: "false answer (target 0%)", simulated: false },
    ],
    values: [
      groups.map((group) => byCourse[group].recallAt3),
      groups.map((group) => byCourse[group].falseAbstentionRate),
      groups.map((group) => byCourse[group].falseAnswerRate),
    ],
    format: (value) => `${Math.round(value * 100)}%`,
    axisMax: 1,
  });
  return { runs, byCourse, withoutSynonyms, calibrated, twoFold, workflowAgrees, markdown, svg };
}
