/**
 * When the checkpointer may keep a checkpoint in memory: only while some
 * node is triggered by it (the run goes on, and its next effect or its end
 * writes it); anything else is written at once.
 */
import { describe, expect, it } from "vitest";
import { runContinuesFrom } from "../../src/persistence/checkpointer.js";
import { writesReplace } from "../../src/persistence/checkpoint-sql.js";

const v = (n: number) => `${String(n).padStart(32, "0")}.0.5`;

describe("runContinuesFrom", () => {
  it("is true while a node's trigger is newer than what it has seen, or unseen", () => {
    expect(runContinuesFrom({ channel_versions: { "branch:to:plan": v(3), messages: v(3) }, versions_seen: { plan: { "branch:to:plan": v(1) } } })).toBe(true);
    expect(runContinuesFrom({ channel_versions: { "branch:to:execute": v(4) }, versions_seen: { plan: { "branch:to:plan": v(1) } } })).toBe(true);
    // Versions compare as LangGraph compares them: 10 after 9.
    expect(runContinuesFrom({ channel_versions: { "branch:to:plan": v(10) }, versions_seen: { plan: { "branch:to:plan": v(9) } } })).toBe(true);
  });

  it("is false when every trigger was seen, and when there are no StateGraph triggers (written at once)", () => {
    expect(runContinuesFrom({ channel_versions: { "branch:to:plan": v(3), messages: v(5) }, versions_seen: { plan: { "branch:to:plan": v(3) } } })).toBe(false);
    expect(runContinuesFrom({ channel_versions: { messages: v(5) }, versions_seen: {} })).toBe(false);
    expect(runContinuesFrom({ channel_versions: {}, versions_seen: {} })).toBe(false);
    // A node named like an inherited property is looked up as an own property only.
    expect(runContinuesFrom({ channel_versions: { "branch:to:toString": v(2) }, versions_seen: { toString: { "branch:to:toString": v(2) } } })).toBe(false);
  });
});

describe("writesReplace", () => {
  it("replaces only batches of special channels", () => {
    expect(writesReplace([["__interrupt__", 1]])).toBe(true);
    expect(writesReplace([["__resume__", 1], ["__error__", 2]])).toBe(true);
    expect(writesReplace([["__interrupt__", 1], ["messages", 2]])).toBe(false);
    expect(writesReplace([["constructor", 1]])).toBe(false);
  });
});
