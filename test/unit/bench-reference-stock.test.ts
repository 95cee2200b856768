/**
 * The served reference runs on stock LangChain: the modules bench/reference-server.ts builds createReactAgent from
 * (bench/peers.ts) leave core's `runWithConfig` as it is, while importing Warrant's graph module replaces it in the
 * process (`useLeanRunContext`), which is what the reference server refuses to start with. Each case runs in a
 * fresh Node process, so no other test's imports are in its module graph.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, test } from "vitest";

/** Whether core's runWithConfig has been replaced after importing `module` in a fresh process. */
function replacedAfterImporting(module: string): boolean {
  const script = [
    `const { AsyncLocalStorageProviderSingleton: provider } = await import("@langchain/core/singletons");`,
    `await import(${JSON.stringify(module)});`,
    `process.stdout.write(String(Object.hasOwn(provider, "runWithConfig")));`,
  ].join("\n");
  const output = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: process.cwd(),
    env: { ...process.env, LANGSMITH_TRACING: "false" },
    encoding: "utf8",
    timeout: 60_000,
  });
  return output.trim().endsWith("true");
}

describe("the served reference's imports", () => {
  test("bench/peers.ts leaves core's runWithConfig stock", { timeout: 90_000 }, () => {
    expect(replacedAfterImporting("./bench/peers.ts")).toBe(false);
  });

  test("Warrant's graph module replaces it (the case the reference server refuses)", { timeout: 90_000 }, () => {
    expect(replacedAfterImporting("./graphs/agent.ts")).toBe(true);
  });
});
