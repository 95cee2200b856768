import { describe, expect, it } from "vitest";
import { redactOutcome, redactProposal } from "../../src/planners/sanitize.js";
import { parseToolArguments } from "../../src/policy/arguments.js";
import { actionFingerprint } from "../../src/policy/fingerprint.js";
import { createSecretScanner, MARKER_PATTERN } from "../../src/secrets/scanner.js";

const scanner = createSecretScanner({ key: new Uint8Array(32).fill(3) });
const KEY = "sk-FAKEintake0123456789abcdefABCD";
const proposal = (raw: string) => ({ call_id: "call_1", name: "search_notes", raw_arguments: raw });

describe("model-proposed arguments at intake", () => {
  it("stores parsed arguments re-serialized with markers, and keeps clean ones byte for byte", () => {
    const clean = proposal('{ "query":  "attention" }');
    expect(redactProposal(clean, scanner, [])).toEqual({ call: clean, found: [] });

    const { call, found } = redactProposal(proposal(JSON.stringify({ query: `rotate ${KEY}` })), scanner, []);
    expect(call.raw_arguments).not.toContain(KEY);
    expect(found).toEqual([
      { path: "arguments.query", kind: "api_key", marker: expect.stringMatching(MARKER_PATTERN) },
    ]);
    const parsed = parseToolArguments(call.raw_arguments);
    expect(parsed.ok && parsed.value["query"]).toBe(`rotate ${found[0]?.marker}`);
  });

  it("gives one secret one fingerprint across proposals (repeat detection still works)", () => {
    const first = redactProposal(proposal(JSON.stringify({ query: KEY })), scanner, []).call;
    const second = redactProposal(proposal(`{"query":"${KEY}"}`), scanner, []).call;
    const args = (raw: string) => {
      const parsed = parseToolArguments(raw);
      return parsed.ok ? parsed.value : {};
    };
    expect(actionFingerprint("search_notes", args(first.raw_arguments))).toBe(
      actionFingerprint("search_notes", args(second.raw_arguments)),
    );
  });

  it("catches a secret hidden by JSON escapes or by a duplicate key the parser drops", () => {
    const escaped = redactProposal(proposal(`{"query":"\\u0073k-FAKEintake0123456789abcdefABCD"}`), scanner, []);
    expect(JSON.stringify(escaped.call)).not.toContain("FAKEintake");
    const duplicate = redactProposal(proposal(`{"query":"${KEY}","query":"attention"}`), scanner, []);
    expect(duplicate.call.raw_arguments).toBe('{"query":"attention"}');
    expect(duplicate.found).toHaveLength(1);
  });

  it("redacts unparseable text by shape, and replaces it whole for a tool with sensitive fields", () => {
    const broken = redactProposal(proposal(`{"query": "${KEY}`), scanner, []);
    expect(broken.call.raw_arguments).toMatch(/^\{"query": "\[redacted:api_key:[0-9a-f]{12}\]$/);
    const sensitive = redactProposal(proposal(`{"password": "hunter2`), scanner, ["password"]);
    expect(sensitive.call.raw_arguments).toMatch(/^\[redacted:sensitive:[0-9a-f]{12}\]$/);
    expect(
      redactProposal(proposal(JSON.stringify({ password: "hunter2", query: "x" })), scanner, ["password"]).call
        .raw_arguments,
    ).not.toContain("hunter2");
  });

  it("redacts a reply's prose and names each site", () => {
    const calls = redactOutcome(
      {
        type: "tool_calls",
        text: `using ${KEY}`,
        calls: [proposal(JSON.stringify({ query: KEY })), { ...proposal("{}"), call_id: "call_2" }],
      },
      scanner,
      () => [],
    );
    expect(JSON.stringify(calls.outcome)).not.toContain(KEY);
    expect(calls.redactions.map((entry) => [entry.where, entry.subject, entry.tool])).toEqual([
      ["arguments", "call_1", "search_notes"],
      ["planner_text", "text", null],
    ]);
    const final = redactOutcome(
      { type: "final", answer: `the key is ${KEY}`, citations: [], abstained: false },
      scanner,
      () => [],
    );
    expect(final.outcome).toMatchObject({ answer: expect.not.stringContaining(KEY) });
    expect(redactOutcome({ type: "needs_human", reason: KEY }, scanner, () => []).redactions).toHaveLength(1);
  });
});
