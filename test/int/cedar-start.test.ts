/**
 * Issue 40: `npm start` refuses to start when the Cedar policies are
 * malformed or do not match the schema, with Cedar's diagnostics on its one
 * `warrant:` line (the same lines `npm run policy -- check` prints).
 */
import { execFile } from "node:child_process";
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const REPO_ROOT = path.resolve(import.meta.dirname, "../..");

function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "src/server/main.ts"],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, HOST: "127.0.0.1", PORT: "0", DATABASE_URL: "", WARRANT_WORKERS: "1", ...env },
        timeout: 90_000,
      },
      (error, _stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr }),
    );
  });
}

describe("npm start with Cedar policies", () => {
  it("refuses to start on a malformed policy and on one that does not type-check, with the diagnostics", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "cedar-start-"));
    try {
      const shipped = JSON.parse(await readFile(path.join(REPO_ROOT, "warrant.config.json"), "utf8"));
      await copyFile(path.join(REPO_ROOT, "policies/warrant.cedarschema"), path.join(dir, "warrant.cedarschema"));
      const configPath = path.join(dir, "warrant.config.json");
      await writeFile(
        configPath,
        JSON.stringify({
          ...shipped,
          policy: { engine: "cedar", cedar: { schema: "warrant.cedarschema", policies: ["rules.cedar"] } },
        }),
      );
      const cases: [string, RegExp][] = [
        ["permit (principal, action resource);", /rules\.cedar: .*unexpected token/],
        [
          `@id("typo") permit (principal, action == Warrant::Action::"read_note", resource) when { context.args.note == "x" };`,
          /rules\.cedar \(policy typo\): .*args\.note/,
        ],
      ];
      for (const [text, diagnostic] of cases) {
        await writeFile(path.join(dir, "rules.cedar"), text);
        const result = await start({ WARRANT_CONFIG: configPath, WARRANT_DATA_DIR: path.join(dir, "data") });
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(/^warrant: config_invalid: /m);
        expect(result.stderr).toMatch(diagnostic);
        expect(result.stderr).not.toMatch(/^\s+at /m);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it("refuses to start when the schema does not match the catalog (a contracted tool without an action)", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "cedar-start-"));
    try {
      const shipped = JSON.parse(await readFile(path.join(REPO_ROOT, "warrant.config.json"), "utf8"));
      const schema = await readFile(path.join(REPO_ROOT, "policies/warrant.cedarschema"), "utf8");
      const withoutReadNote = schema.replace(/ {2}action "read_note"[^;]*;\n/, "");
      expect(withoutReadNote).not.toBe(schema);
      await writeFile(path.join(dir, "warrant.cedarschema"), withoutReadNote);
      await writeFile(path.join(dir, "rules.cedar"), `@id("all") permit (principal, action, resource);`);
      const configPath = path.join(dir, "warrant.config.json");
      await writeFile(
        configPath,
        JSON.stringify({
          ...shipped,
          policy: { engine: "cedar", cedar: { schema: "warrant.cedarschema", policies: ["rules.cedar"] } },
        }),
      );
      const result = await start({ WARRANT_CONFIG: configPath, WARRANT_DATA_DIR: path.join(dir, "data") });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^warrant: config_invalid: /m);
      expect(result.stderr).toContain("the Cedar schema has no action for the contracted tool read_note");
      expect(result.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
