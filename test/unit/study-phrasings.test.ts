/**
 * The labelled study phrasings (eval/phrasings): the held-out split must
 * keep at least 90% of its study phrasings right (the plan, or the one
 * question it needs), neither split may produce a single plan with the wrong
 * topic, start or minutes, and every out-of-scope phrasing is refused naming
 * what the rules planner can do. The figures are printed for the README.
 */
import { describe, expect, it } from "vitest";
import { HELDOUT } from "../../eval/phrasings/heldout.js";
import { scoreSet } from "../../eval/phrasings/score.js";
import { TUNING } from "../../eval/phrasings/tuning.js";

const percent = (part: number, whole: number) => Math.round((part / whole) * 1000) / 10;

describe("the labelled study phrasings", () => {
  it("has at least 60 study phrasings in two disjoint splits, and out-of-scope ones in each", () => {
    const study = [...TUNING, ...HELDOUT].filter((phrasing) => phrasing.expect.type !== "refuse");
    expect(study.length).toBeGreaterThanOrEqual(60);
    const texts = new Set(TUNING.map((phrasing) => phrasing.text.toLowerCase()));
    expect(HELDOUT.filter((phrasing) => texts.has(phrasing.text.toLowerCase()))).toEqual([]);
    const ids = [...TUNING, ...HELDOUT].map((phrasing) => phrasing.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const split of [TUNING, HELDOUT])
      expect(split.filter((phrasing) => phrasing.expect.type === "refuse").length).toBeGreaterThanOrEqual(5);
  });

  for (const [name, split, floor] of [
    ["held-out", HELDOUT, 90],
    ["tuning", TUNING, 90],
  ] as const) {
    it(`${name}: >= ${floor}% right, no wrong plan, every refusal says what it can do`, () => {
      const score = scoreSet(split);
      const misses = score.results.filter((result) => result.verdict !== "right" && result.verdict !== "refused");
      console.log(
        `${name}: ${score.right}/${score.study} study phrasings right (${percent(score.right, score.study)}%), ` +
          `${score.wrong_plans} wrong plan(s), ${score.misses} miss(es); ` +
          `${score.refused}/${score.out_of_scope} out-of-scope refused saying what it can do`,
      );
      for (const miss of misses) console.log(`  ${miss.id}: ${miss.verdict}: ${miss.got}`);
      expect(percent(score.right, score.study)).toBeGreaterThanOrEqual(floor);
      expect(score.results.filter((result) => result.verdict === "wrong_plan")).toEqual([]);
      expect(score.refused).toBe(score.out_of_scope);
    });
  }
});
