/**
 * scripts/build-server.mjs, what `npm start` runs: the compiled server finds
 * the repository from `.build/` as the TypeScript does from src/, and a
 * second build rewrites nothing that did not change.
 */
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";

const build = () => execFileSync(process.execPath, ["scripts/build-server.mjs"], { cwd: REPO_ROOT, stdio: "pipe" });
const compiled = (...parts: string[]) => path.join(REPO_ROOT, ".build", ...parts);

describe("the compiled server", () => {
  it("is written for every source and knows the repository root", () => {
    build();
    for (const file of ["src/server/main.js", "src/env.js", "graphs/agent.js", "graphs/workflow.js"])
      expect(statSync(compiled(file)).isFile()).toBe(true);
    const script = `import(${JSON.stringify(compiled("src", "env.js"))}).then((env) => console.log(env.REPO_ROOT))`;
    const root = execFileSync(process.execPath, ["-e", script], { cwd: "/", encoding: "utf8" }).trim();
    expect(root).toBe(REPO_ROOT);
  });

  it("is left alone by a build with nothing changed", () => {
    build();
    const before = statSync(compiled("src", "server", "main.js")).mtimeMs;
    build();
    expect(statSync(compiled("src", "server", "main.js")).mtimeMs).toBe(before);
  });
});
