/**
 * `npm run token`: mints a bearer token for a dev principal; the token alone
 * is the last line of stdout and verifies with the server's secret.
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
    const weak = await token(["--user", "alice"], { WARRANT_AUTH_SECRET: "abcd" });
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/^warrant: config_invalid: WARRANT_AUTH_SECRET/m);
  }, 60_000);
});
