/**
 * Per-question view of the retrieval suite, for analysing misses:
 * `npx tsx eval/retrieval/explain.ts [--set=calibration|labelled|fresh|heldout|heldout2] [--all] [id-substring…]`
 * prints each question's labelled notes, the planner's query, its top hits
 * with scores and what it decided, then the set's figures. By default only
 * the misses (false abstentions, false answers, recall below 1) are printed.
 */
import { canRead } from "../../tools/notes/corpus.js";
import { explainRank } from "../../tools/notes/search.js";
import { FRESH_QUESTIONS } from "./fresh.js";
import { HELD_OUT_QUESTIONS } from "./heldout.js";
import { HELD_OUT_2_QUESTIONS } from "./heldout2.js";
import { CALIBRATION_QUESTIONS } from "./calibration.js";
import { figures, isFalseAnswer } from "./metrics.js";
import { QUESTIONS } from "./questions.js";
import { loadFixture, runAll, type RetrievalRun } from "./run.js";

function recallOf(run: RetrievalRun): number {
  const answers = run.question.answers;
  if (answers === "abstain") return 1;
  const top = new Set(run.cited.slice(0, 3));
  return answers.filter((id) => top.has(id)).length / Math.min(answers.length, 3);
}

async function main(argv: string[]): Promise<void> {
  const all = argv.includes("--all");
  const filters = argv.filter((arg) => !arg.startsWith("--"));
  const set = argv.find((arg) => arg.startsWith("--set="))?.slice("--set=".length) ?? "calibration";
  const sets = {
    calibration: CALIBRATION_QUESTIONS,
    labelled: QUESTIONS,
    fresh: FRESH_QUESTIONS,
    heldout: HELD_OUT_QUESTIONS,
    heldout2: HELD_OUT_2_QUESTIONS,
  } as const;
  if (!Object.hasOwn(sets, set))
    throw new Error(`unknown set ${set}: calibration, labelled, fresh, heldout or heldout2`);
  const fixture = await loadFixture();
  const runs = runAll(fixture, sets[set as keyof typeof sets]);
  for (const run of runs) {
    const q = run.question;
    const verdict = isFalseAnswer(q, run.cited)
      ? "FALSE-ANSWER"
      : q.answers !== "abstain" && run.cited.length === 0
        ? "FALSE-ABSTAIN"
        : recallOf(run) < 1
          ? "PARTIAL"
          : "ok";
    if (filters.length > 0 ? !filters.some((f) => q.id.includes(f)) : !all && verdict === "ok") continue;
    const expected = q.answers === "abstain" ? "abstain" : q.answers.join(", ");
    process.stdout.write(`\n[${verdict}] ${q.id} (${q.user}, ${q.kind}) ${q.question}\n`);
    process.stdout.write(`  expected: ${expected}${q.related ? ` (related ${q.related.join(", ")})` : ""}\n`);
    process.stdout.write(`  query: ${run.query ?? "(no search)"}\n`);
    for (const hit of run.hits.slice(0, 4)) process.stdout.write(`    ${(hit.score ?? 0).toFixed(3)} ${hit.note_id}\n`);
    process.stdout.write(`  decided: ${run.ending} ${run.cited.join(", ")}\n`);
    if (run.query === undefined || !argv.includes("--concepts")) continue;
    const principal = fixture.principal(q.user);
    const visible = fixture.index.notes.filter((note) => canRead(principal, note));
    const top = run.hits.slice(0, 2).map((hit) => hit.note_id);
    for (const concept of explainRank(fixture.index.cache.for(visible), run.query)) {
      const cover = top.map((id) => `${id.split(".")[1]}=${(concept.coverage.get(id) ?? 0).toFixed(2)}`).join(" ");
      process.stdout.write(
        `      concept "${concept.words}" ${JSON.stringify(concept.alternatives)} w=${concept.weight.toFixed(2)} ${cover}\n`,
      );
    }
  }
  const f = figures(runs);
  const pct = (value: number) => `${(value * 100).toFixed(1)}%`;
  process.stdout.write(
    `\n${set}: ${f.questions} questions; recall@3 ${pct(f.recallAt3)}; false abstention ${pct(f.falseAbstentionRate)} ` +
      `(${f.falseAbstentions}/${f.answerable}); false answer ${pct(f.falseAnswerRate)} (${f.falseAnswers}/${f.questions})\n`,
  );
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exitCode = 1;
});
