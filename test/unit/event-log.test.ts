import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { EventLog, toWire, toWireJson } from "../../src/server/events.js";

async function collect(log: EventLog, after?: number, signal?: AbortSignal): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of log.read(after, signal)) seen.push(`${event.id}:${event.event}`);
  return seen;
}

describe("EventLog", () => {
  it("replays everything to a late reader and only what follows Last-Event-ID to a rejoining one", async () => {
    const log = new EventLog();
    log.push("metadata", {});
    log.push("updates", { plan: {} });
    log.push("values", {});
    log.close();
    expect(await collect(log)).toEqual(["0:metadata", "1:updates", "2:values"]);
    expect(await collect(log, 0)).toEqual(["1:updates", "2:values"]);
    expect(await collect(log, 2)).toEqual([]);
  });

  it("delivers events pushed while a reader waits, and ends when the log closes", async () => {
    const log = new EventLog();
    const reading = collect(log);
    log.push("metadata", {});
    await new Promise((resolve) => setTimeout(resolve, 5));
    log.push("values", {});
    log.close();
    log.push("ignored", {});
    expect(await reading).toEqual(["0:metadata", "1:values"]);
    await expect(log.finished()).resolves.toBeUndefined();
  });

  it("a reader that aborts stops without closing the log for others", async () => {
    const log = new EventLog();
    const controller = new AbortController();
    const aborted = collect(log, undefined, controller.signal);
    const other = collect(log);
    log.push("metadata", {});
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect(await aborted).toEqual(["0:metadata"]);
    log.push("values", {});
    log.close();
    expect(await other).toEqual(["0:metadata", "1:values"]);
  });
});

describe("EventLog window", () => {
  it("says whether it still holds everything after an id, once the oldest events are dropped", () => {
    const log = new EventLog();
    expect(log.holds(undefined)).toBe(true);
    for (let index = 0; index < 20_005; index += 1) log.push("custom", index);
    // Events 0-4 were dropped: a reader after 3 needs 4, which only the table has.
    expect(log.holds(undefined)).toBe(false);
    expect(log.holds(3)).toBe(false);
    expect(log.holds(4)).toBe(true);
    expect(log.holds(20_004)).toBe(true);
  });
});

describe("wire JSON", () => {
  it("turns LangChain messages into the SDK's plain dicts and errors into {error, message}", () => {
    const wire = toWire<{ messages: { type: string; content: string }[]; failure: unknown }>({
      messages: [new HumanMessage({ content: "hi", id: "h1" }), new AIMessage({ content: "hello", id: "a1" })],
      failure: new TypeError("bad"),
    });
    expect(wire.messages.map((message) => [message.type, message.content])).toEqual([
      ["human", "hi"],
      ["ai", "hello"],
    ]);
    expect(wire.failure).toEqual({ error: "TypeError", message: "bad" });
    expect(toWireJson(new Error("x"))).not.toContain("stack");
  });
});
