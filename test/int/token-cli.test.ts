/**
 * `npm run token`: mints a bearer token for a dev principal; the token alone
 * is the last line of stdout and verifies with the server's secret. Hostile
 * `--revoke`/`--revoke-user` values are usage errors before any database is
 * opened (revocation itself: test/int/deploy-security.test.ts).
 */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadApiSecret, verifyApiToken } from "../../src/auth/api-token.js";
import { REPO_ROOT } from "../../src/env.js";

const run = promisify(execFile);
let dataDir: string;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-token-"));
});
afterAll(async () => fs.rm(dataDir, { recursive: true, force: true }));

async function token(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run("npm", ["run", "-s", "token", "--", ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, WARRANT_DATA_DIR: dataDir, WARRANT_AUTH_SECRET: "", ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** `node --import tsx src/cli/token.ts ...args`, the script `npm run token` runs. */
async function direct(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "src/cli/token.ts", ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, WARRANT_DATA_DIR: dataDir, WARRANT_AUTH_SECRET: "", ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("npm run token", () => {
  it("prints a token for alice on its last line, signed with the data dir's secret", async () => {
    const result = await token(["--user", "alice", "--ttl", "600"]);
    expect(result.code).toBe(0);
    const last = result.stdout.trim().split("\n").at(-1)!;
    const secret = await loadApiSecret({ configured: undefined, dataDir });
    const verified = await verifyApiToken(secret, last);
    expect(verified).toMatchObject({
      ok: true,
      principal: { user_id: "alice", tenant: "uni", grants: { courses: ["cs301"] } },
    });
  }, 60_000);

  it("exits 1 for an unknown user and 2 for usage errors, printing no token", async () => {
    const cases: [string[], number, RegExp][] = [
      [["--user", "mallory"], 1, /^warrant: principal_unknown: /m],
      [[], 2, /^warrant: usage: --user is required/m],
      [["--user", "alice", "--ttl", "0"], 2, /^warrant: usage: --ttl/m],
      [["--user", "alice", "--ttl", "1h"], 2, /^warrant: usage: --ttl/m],
      [["--user", "alice", "--admin"], 2, /^warrant: usage: /m],
    ];
    for (const [args, code, message] of cases) {
      const result = await token(args);
      expect({ args, code: result.code }).toEqual({ args, code });
      expect(result.stderr).toMatch(message);
      expect(result.stdout).not.toMatch(/eyJ/);
    }
    // The token's id goes to stderr, so it can be revoked later.
    const minted = await token(["--user", "alice"]);
    expect(minted.stderr).toMatch(/^token id \(revoke with --revoke\): [0-9a-f-]{36}$/m);
    const weak = await token(["--user", "alice"], { WARRANT_AUTH_SECRET: "abcd" });
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/^warrant: config_invalid: WARRANT_AUTH_SECRET/m);
  }, 60_000);

  it("refuses hostile --revoke and --revoke-user values with a typed usage error, touching no database", async () => {
    // An unreachable database: a value that got past validation would fail with database_unreachable instead.
    const env = { DATABASE_URL: "postgres://postgres@127.0.0.1:1/none" };
    const cases: [string[], RegExp][] = [
      [["--revoke", ""], /^warrant: usage: --revoke takes a token id/m],
      [["--revoke", "x'; drop table warrant.token_revocations; --"], /^warrant: usage: --revoke takes a token id/m],
      [["--revoke", "../../etc/passwd"], /^warrant: usage: --revoke takes a token id/m],
      [["--revoke", "a".repeat(65)], /^warrant: usage: --revoke takes a token id/m],
      [["--revoke", "caf\u00e9"], /^warrant: usage: --revoke takes a token id/m],
      [["--revoke", "abc", "--ttl", "60"], /^warrant: usage: --ttl goes with --user only/m],
      [["--revoke", "abc", "--user", "alice"], /^warrant: usage: give one of --user, --revoke, --revoke-user/m],
      [["--revoke-user", "Alice"], /^warrant: usage: --revoke-user takes a user id/m],
      [["--revoke-user", "__proto__ "], /^warrant: usage: --revoke-user takes a user id/m],
      [["--revoke-user", "alice", "--revoke", "abc"], /^warrant: usage: give one of/m],
      [["--revoke-user"], /^warrant: usage: /m],
      [["--revoke"], /^warrant: usage: /m],
    ];
    // Straight through node (what `npm run token` runs), a few at once: each start costs seconds on a busy machine.
    const results = [];
    for (let index = 0; index < cases.length; index += 4)
      results.push(...(await Promise.all(cases.slice(index, index + 4).map(([args]) => direct(args, env)))));
    for (const [index, [args, message]] of cases.entries()) {
      const result = results[index]!;
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/database_unreachable|at .*\.ts:/);
    }
    // A valid id on an unreachable database: one typed line, exit 1.
    const unreachable = await direct(["--revoke", "0b3c7c2e-1111-4a4a-9999-000000000000"], env);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^warrant: database_unreachable: /m);
  }, 240_000);
});
