/**
 * When the checkpointer may keep a checkpoint in memory: only while some
 * node is triggered by it (the run goes on, and its next effect or its end
 * writes it); anything else is written at once.
 */
import { describe, expect, it } from "vitest";
import { runContinuesFrom } from "../../src/checkpoint/checkpointer.js";
import { writesReplace } from "../../src/checkpoint/checkpoint-sql.js";

const v = (n: number) => `${String(n).padStart(32, "0")}.0.5`;

/** A checkpoint's versions, with a value in every trigger channel unless `empty` names it. */
function at(
  channel_versions: Record<string, string>,
  versions_seen: Record<string, Record<string, string>>,
  empty: string[] = [],
) {
  const channel_values = Object.fromEntries(
    Object.keys(channel_versions)
      .filter((channel) => !empty.includes(channel))
      .map((channel) => [channel, null]),
  );
  return { channel_versions, versions_seen, channel_values };
}

describe("runContinuesFrom", () => {
  it("is true while a node's trigger is newer than what it has seen, or unseen", () => {
    expect(runContinuesFrom(at({ "branch:to:plan": v(3), messages: v(3) }, { plan: { "branch:to:plan": v(1) } }))).toBe(
      true,
    );
    expect(runContinuesFrom(at({ "branch:to:execute": v(4) }, { plan: { "branch:to:plan": v(1) } }))).toBe(true);
    // Versions compare as LangGraph compares them: 10 after 9.
    expect(runContinuesFrom(at({ "branch:to:plan": v(10) }, { plan: { "branch:to:plan": v(9) } }))).toBe(true);
  });

  it("is false when every trigger was seen, and when there are no StateGraph triggers (written at once)", () => {
    expect(runContinuesFrom(at({ "branch:to:plan": v(3), messages: v(5) }, { plan: { "branch:to:plan": v(3) } }))).toBe(
      false,
    );
    expect(runContinuesFrom(at({ messages: v(5) }, {}))).toBe(false);
    expect(runContinuesFrom(at({}, {}))).toBe(false);
    // A trigger its node consumed is empty, and newer than what the node saw (LangGraph bumps it): the run ended.
    expect(
      runContinuesFrom(
        at({ "branch:to:increment": v(3), count: v(3) }, { increment: { "branch:to:increment": v(2) } }, [
          "branch:to:increment",
        ]),
      ),
    ).toBe(false);
    // A node named like an inherited property is looked up as an own property only.
    expect(runContinuesFrom(at({ "branch:to:toString": v(2) }, { toString: { "branch:to:toString": v(2) } }))).toBe(
      false,
    );
  });
});

describe("writesReplace", () => {
  it("replaces only batches of special channels", () => {
    expect(writesReplace([["__interrupt__", 1]])).toBe(true);
    expect(
      writesReplace([
        ["__resume__", 1],
        ["__error__", 2],
      ]),
    ).toBe(true);
    expect(
      writesReplace([
        ["__interrupt__", 1],
        ["messages", 2],
      ]),
    ).toBe(false);
    expect(writesReplace([["constructor", 1]])).toBe(false);
  });
});
