/** src/cluster/node-flags.ts: `npm start` and the forked workers run with the server's V8 flags; an own setting wins. */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { SERVER_NODE_FLAGS, withServerFlags } from "../../src/cluster/node-flags.js";

describe("server node flags", () => {
  it("npm start passes every one of them", async () => {
    const manifest = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
      scripts: Record<string, string>;
    };
    const words = manifest.scripts["start"]?.split(/\s+/) ?? [];
    for (const flag of SERVER_NODE_FLAGS) expect(words).toContain(flag);
  });

  it("adds them to a worker's execArgv unless it sets them already", () => {
    expect(withServerFlags(["--import", "tsx"])).toEqual(["--import", "tsx", ...SERVER_NODE_FLAGS]);
    expect(withServerFlags(["--max-semi-space-size=16"])).toEqual(["--max-semi-space-size=16"]);
    expect(withServerFlags([...SERVER_NODE_FLAGS])).toEqual([...SERVER_NODE_FLAGS]);
  });
});
