import { calibrate, figures, sweep } from "./metrics.js";
import { QUESTIONS } from "./questions.js";
import { CHOICES, SHIPPED } from "./report.js";
import { loadFixture, runAll } from "./run.js";
const runs = runAll(await loadFixture(), QUESTIONS);
const show = (f: ReturnType<typeof figures>) =>
  `R ${(f.recallAt3 * 100).toFixed(1)} FAb ${f.falseAbstentions}/${f.answerable} FA ${f.falseAnswers}`;
console.log("shipped", JSON.stringify(SHIPPED), show(figures(runs)));
{
  const c = calibrate(runs, CHOICES)!;
  console.log("all", JSON.stringify(c), show(sweep(runs, [c])[0]!.figures));
}
const halves = [runs.filter((_, i) => i % 2 === 0), runs.filter((_, i) => i % 2 === 1)];
for (const k of [0, 1]) {
  const c = calibrate(halves[k]!, CHOICES)!;
  console.log(
    k ? "odd" : "even",
    JSON.stringify(c),
    "own",
    show(sweep(halves[k]!, [c])[0]!.figures),
    "held-out",
    show(sweep(halves[1 - k]!, [c])[0]!.figures),
  );
}
