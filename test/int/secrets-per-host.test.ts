/**
 * The secret scanner belongs to its tool host (issue 21, item 5): two tool
 * hosts in one process, each with its own `secrets.patterns` and marker key,
 * each connected to its own real MCP child process (the "everything"
 * server's `echo`). Each host redacts what its own patterns name, in results
 * and in what is redacted with its scanner (resume values, log lines),
 * whichever host was built last; code without a host uses the built-in
 * patterns only, never a host's.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTools, type CallOptions, type ToolHost } from "../../src/mcp/tool-host.js";
import { parseConfig } from "../../src/policy/config.js";
import type { CatalogTool } from "../../src/policy/contracts.js";
import * as processScanner from "../../src/secrets/process-scanner.js";
import { logLine, withoutSecretShapes } from "../../src/secrets/process-scanner.js";
import { MARKER_PATTERN } from "../../src/secrets/scanner.js";
import { principal } from "./support/agent.js";

const suffix = randomBytes(8).toString("hex");
/** A secret only host A's patterns name, one only host B's name, and one every scanner knows (built in). */
const ALPHA = `alpha_${suffix}`;
const BETA = `beta_${suffix}`;
const BUILTIN = `sk-proj-BUILTIN${suffix}`;
const MESSAGE = `keys ${ALPHA} and ${BETA} and ${BUILTIN}`;

function configWith(kind: string, pattern: string) {
  return parseConfig(
    JSON.stringify({
      servers: {
        everything: {
          transport: "stdio",
          command: "node",
          args: ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
        },
      },
      tools: { echo: { server: "everything", risk: "read", timeout_ms: 5_000, max_string_chars: 500 } },
      secrets: { patterns: { [kind]: pattern } },
    }),
    `${kind} config`,
  );
}

let hostA: ToolHost;
let hostB: ToolHost;
let options: CallOptions;

beforeAll(async () => {
  hostA = await connectTools(configWith("alpha_token", "\\balpha_[0-9a-f]{16}\\b"), undefined, {
    onHealth: () => undefined,
    redactionKey: new Uint8Array(randomBytes(32)),
  });
  // Built second: with a process-wide "current scanner" this host would decide redaction for A too.
  hostB = await connectTools(configWith("beta_token", "\\bbeta_[0-9a-f]{16}\\b"), undefined, {
    onHealth: () => undefined,
    redactionKey: new Uint8Array(randomBytes(32)),
  });
  options = { timeoutMs: 5_000, principal: await principal("alice"), threadId: `per-host-${suffix}` };
}, 60_000);

afterAll(async () => {
  await hostA?.close();
  await hostB?.close();
});

function echoOf(host: ToolHost): CatalogTool {
  const tool = host.catalog().find((entry) => entry.name === "echo");
  if (!tool) throw new Error("echo is not in the catalog");
  return tool;
}

/** The kinds of the markers in a text, in order. */
const kindsIn = (text: string) =>
  [...text.matchAll(MARKER_PATTERN)].map((match) => match[0].slice("[redacted:".length, match[0].lastIndexOf(":")));

describe("two tool hosts with different secret patterns", () => {
  it("each redacts its own patterns in a real server's result, and leaves the other's", async () => {
    const fromA = await hostA.call(echoOf(hostA), { message: MESSAGE }, options);
    const fromB = await hostB.call(echoOf(hostB), { message: MESSAGE }, options);
    expect(fromA.ok && fromB.ok).toBe(true);
    const textA = JSON.stringify(fromA);
    const textB = JSON.stringify(fromB);
    expect(textA).not.toContain(ALPHA);
    expect(textA).toContain(BETA);
    expect(textB).not.toContain(BETA);
    expect(textB).toContain(ALPHA);
    expect(textA).not.toContain(BUILTIN);
    expect(textB).not.toContain(BUILTIN);
    expect(kindsIn(textA)).toEqual(expect.arrayContaining(["alpha_token", "api_key"]));
    expect(kindsIn(textA)).not.toContain("beta_token");
    expect(kindsIn(textB)).toEqual(expect.arrayContaining(["beta_token", "api_key"]));
    expect(kindsIn(textB)).not.toContain("alpha_token");
  });

  it("redacts resume values and log lines with the scanner of the host they belong to", () => {
    const resume = { action_id: "a1", decision: "edit", arguments: { note: MESSAGE } };
    const resumedA = JSON.stringify(withoutSecretShapes(resume, hostA.secrets));
    const resumedB = JSON.stringify(withoutSecretShapes(resume, hostB.secrets));
    expect(kindsIn(resumedA).sort()).toEqual(["alpha_token", "api_key"]);
    expect(kindsIn(resumedB).sort()).toEqual(["api_key", "beta_token"]);
    expect(kindsIn(logLine(MESSAGE, hostA.secrets)).sort()).toEqual(["alpha_token", "api_key"]);
    expect(kindsIn(logLine(MESSAGE, hostB.secrets)).sort()).toEqual(["api_key", "beta_token"]);
    // Each host keys its own markers: the same built-in secret gets a different marker per host.
    const builtinMarker = (host: ToolHost) => host.secrets?.marker("api_key", BUILTIN);
    expect(builtinMarker(hostA)).not.toEqual(builtinMarker(hostB));
  });

  it("lets no host become the process's scanner: code without a host redacts the built-in shapes only", () => {
    expect(Object.keys(processScanner)).not.toContain("useProcessScanner");
    expect(kindsIn(logLine(MESSAGE))).toEqual(["api_key"]);
    expect(kindsIn(JSON.stringify(withoutSecretShapes({ note: MESSAGE })))).toEqual(["api_key"]);
  });
});
