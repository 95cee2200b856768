/**
 * A short `npm run load`: two server processes on one scratch database,
 * threads from five principals in three tenants, a run limit of one so the
 * 429 path and its backoff are exercised. The load's own checks (no
 * cross-principal datum, no 5xx, every run ended) must all hold, and the
 * leak detector is shown to catch what it looks for.
 */
import { describe, expect, it } from "vitest";
import { findPrincipal, loadPrincipalDirectory } from "../../src/auth/principal.js";
import { REPO_ROOT } from "../../src/env.js";
import { formatReport } from "../../load/report.js";
import { LOAD_REQUESTS, runLoad } from "../../load/run.js";
import { forbiddenFor, leaksIn, Ownership } from "../../load/visibility.js";
import { ADMIN_URL } from "./support/postgres.js";

describe("npm run load (smoke)", () => {
  it("the leak check flags another principal's thread id, an invisible note and another tenant's case", async () => {
    const directory = await loadPrincipalDirectory(`${REPO_ROOT}/src/domains/dev-principals.json`);
    const forbidden = await forbiddenFor(findPrincipal(directory, "alice"), REPO_ROOT);
    const ownership = new Ownership();
    const bobs = "0b0b0b0b-0000-4000-8000-000000000001";
    const alices = "0a0a0a0a-0000-4000-8000-000000000001";
    ownership.record(bobs, "bob");
    ownership.record(alices, "alice");
    const clean = JSON.stringify({ thread_id: alices, citations: ["note:cs301.gradient-descent"] });
    expect(leaksIn(clean, "alice", forbidden, ownership, "test")).toEqual([]);
    const dirty = JSON.stringify({ thread_id: bobs, note: "db201.hash-indexes", text: "see C-201" });
    expect(leaksIn(dirty, "alice", forbidden, ownership, "test").map((leak) => leak.what)).toEqual(
      expect.arrayContaining([`id ${bobs} of bob`, "note db201.hash-indexes", "case C-201 of tenant globex"]),
    );
  });

  it("two instances, five principals in three tenants: every run ends, nothing crosses principals, 429s are backed off", async () => {
    const result = await runLoad({
      mode: "server",
      adminUrl: ADMIN_URL,
      threads: 10,
      instances: 2,
      users: Object.keys(LOAD_REQUESTS),
      maxActiveRuns: 1,
      poolMax: 4,
      timeoutMs: 150_000,
      log: () => undefined,
    });
    const report = formatReport(result).join("\n");
    expect(result.problems, report).toEqual([]);
    expect(result.outcomes).toHaveLength(10);
    expect(result.outcomes.every((outcome) => outcome.ended && outcome.runStatus === "success")).toBe(true);
    expect(result.leaks).toEqual([]);
    expect(result.serverErrors).toBe(0);
    // Two threads per principal at once against a limit of one: the second waits its turn.
    expect(result.outcomes.reduce((sum, outcome) => sum + outcome.backoffs, 0)).toBeGreaterThan(0);
    expect([...result.errors.keys()].every((key) => key === "429 too_many_runs")).toBe(true);
    // Two pools of four plus each instance's calendar child (at most four of its own).
    expect(result.connections?.peak).toBeLessThanOrEqual(2 * (4 + 4));
    expect(report).toMatch(/runs\/s/);
  }, 240_000);
});
