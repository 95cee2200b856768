/**
 * `npm run policy -- matrix` with `auth.oidc`: every mapped group of every
 * issuer is a row, with what it is offered, what is withheld and who reviews
 * its writes (the real command, the real MCP servers of the config).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { REPO_ROOT } from "../../src/env.js";
import { groupsMapping, rolesMapping, writeOidcConfig } from "./support/oidc-config.js";

let config: Awaited<ReturnType<typeof writeOidcConfig>>;

const fixture = useSandbox();
beforeAll(async () => {
  config = fixture.add(
    await writeOidcConfig({
      issuers: [groupsMapping("https://staff.example.com"), rolesMapping("https://campus.example.org")],
    }),
  );
});

describe("the policy matrix of mapped groups", () => {
  it("shows what each mapped group may do, and that the reviewer group reviews the students' writes", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "src/cli/policy.ts", "matrix", "--config", config.path, "--json"],
      { cwd: REPO_ROOT, env: { ...process.env, WARRANT_CONFIG: config.path }, maxBuffer: 16 * 1024 * 1024 },
    );
    const rows = JSON.parse(stdout) as Array<{
      principal: string;
      role: string;
      tenant: string;
      offered: string[];
      review: Array<{ tool: string; deciders: string[] }>;
    }>;
    const students = rows.find((row) => row.principal === "study-students@staff.example.com");
    expect(students).toMatchObject({ role: "student", tenant: "uni" });
    expect(students?.offered).toContain("create_study_event");
    const review = students?.review.find((entry) => entry.tool === "create_study_event");
    expect(review?.deciders).toContain("study-reviewers@staff.example.com");
    const reviewers = rows.find((row) => row.principal === "study-reviewers@staff.example.com");
    expect(reviewers?.offered).not.toContain("create_study_event");
    expect(rows.find((row) => row.principal === "warrant-operators@staff.example.com")?.role).toBe(
      "operator (operator commands)",
    );
    // The second issuer's roles, in the tenant its claim names.
    expect(rows.find((row) => row.principal === "learner@campus.example.org")).toMatchObject({
      role: "student",
      tenant: "<tenant>",
    });
  }, 180_000);
});
