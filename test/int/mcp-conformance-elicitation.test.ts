/**
 * The conformance suite's `elicitation-sep1034-client-defaults` scenario
 * through the host (issue 25, item 3): the scenario's server elicits a form
 * whose every field has a default during a tool call; the host declares form
 * elicitation, routes the question to the call's answerer (here one that
 * accepts leaving every field empty) and fills in the defaults before the
 * answer goes back. Without the handler the server's request fails and all
 * five checks are FAILURE.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runScenario, verdicts } from "./support/conformance-suite.js";

const SCENARIO = "elicitation-sep1034-client-defaults";

let output: string;

beforeAll(async () => {
  output = await mkdtemp(path.join(tmpdir(), "warrant-conformance-elicitation-"));
});

afterAll(async () => {
  await rm(output, { recursive: true, force: true });
});

describe("MCP conformance: elicitation defaults (SEP-1034) through the host", () => {
  it("passes every check of the scenario", async () => {
    const { exitCode, checks, printed } = await runScenario(SCENARIO, output);
    expect(verdicts(checks)).toEqual({
      "client-elicitation-sep1034-string-default": "SUCCESS",
      "client-elicitation-sep1034-integer-default": "SUCCESS",
      "client-elicitation-sep1034-number-default": "SUCCESS",
      "client-elicitation-sep1034-enum-default": "SUCCESS",
      "client-elicitation-sep1034-boolean-default": "SUCCESS",
    });
    expect(printed).toMatchObject({ result: { ok: true } });
    expect((printed.result as { text?: string }).text).toContain('"name":"John Doe"');
    expect(exitCode).toBe(0);
  }, 120_000);
});
