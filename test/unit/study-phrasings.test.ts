/**
 * The labelled study phrasings (eval/phrasings): the held-out split must
 * keep at least 90% of its study phrasings right (the plan, or the one
 * question it needs), neither split may produce a single plan with the wrong
 * topic, start or minutes, and every out-of-scope phrasing is refused naming
 * what the rules planner can do. The figures are printed for the README.
 */
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { HELDOUT } from "../../eval/phrasings/heldout.js";
import { examplesFor, type NotesSearch, scoreSet } from "../../eval/phrasings/score.js";
import { TUNING } from "../../eval/phrasings/tuning.js";
import { REPO_ROOT } from "../../src/env.js";
import { buildSearchIndex, loadCorpus, loadSynonyms, searchNotes } from "../../tools/notes/corpus.js";

const percent = (part: number, whole: number) => Math.round((part / whole) * 1000) / 10;

/** The shipped notes search, as a student of the asker's courses: what an out-of-scope request's search finds. */
let search: NotesSearch;
beforeAll(async () => {
  const data = path.join(REPO_ROOT, "tools", "notes", "data");
  const index = buildSearchIndex(
    await loadCorpus(path.join(data, "notes.json")),
    await loadSynonyms(path.join(data, "synonyms.json")),
  );
  search = (query, limit, courses) =>
    searchNotes(
      index,
      { user_id: "asker", tenant: "uni", role: "student", scopes: ["notes:read"], courses: [...courses] },
      { query, limit },
    );
});

describe("the labelled study phrasings", () => {
  it("has at least 60 study phrasings in two disjoint splits, and out-of-scope ones in each", () => {
    const study = [...TUNING, ...HELDOUT].filter((phrasing) => phrasing.expect.type !== "refuse");
    expect(study.length).toBeGreaterThanOrEqual(60);
    // The held-out split alone holds at least 60: its figures are the ones the README reports.
    expect(HELDOUT.filter((phrasing) => phrasing.expect.type !== "refuse").length).toBeGreaterThanOrEqual(60);
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
      const score = scoreSet(split, search);
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

  it("counts a refusal's examples only when they name the asker's course", () => {
    const refusal =
      'I can\'t help with that. What I can do: plan study time. For example: "Make a quiz from my db201 notes" or ' +
      '"Schedule 2 hours of db201 revision tomorrow at 18:00".';
    expect(examplesFor(refusal, ["db201"])).toBe(2);
    expect(examplesFor(refusal, ["cs301"])).toBe(0);
    expect(examplesFor("What I can do: plan study time.", ["db201"])).toBe(0);
  });
});
