/**
 * The `events` stream mode (issue 26): LangChain `streamEvents` v2 events
 * become `events` SSE events with LangGraph's metadata only, and the root
 * graph's `on_chain_stream` chunks become the other modes' events.
 */
import { describe, expect, it } from "vitest";
import { EventLog } from "../../src/server/events.js";
import { RunEmitter } from "../../src/server/runs/emission.js";
import type { RunEventWriter } from "../../src/server/runs/event-writer.js";

const writer = { write: () => undefined, flush: async () => undefined, close: async () => undefined };

async function emitted(modes: ConstructorParameters<typeof RunEmitter>[2], feed: (emitter: RunEmitter) => void) {
  const log = new EventLog();
  const emitter = new RunEmitter(log, writer as unknown as RunEventWriter, modes);
  feed(emitter);
  log.close();
  const events: { event: string; data: unknown }[] = [];
  for await (const event of log.read(undefined)) events.push({ event: event.event, data: JSON.parse(event.json) });
  return events;
}

describe("events mode", () => {
  it("is not asked of LangGraph's stream modes (it is streamEvents), and is wanted only when asked", () => {
    const log = new EventLog();
    const withEvents = new RunEmitter(log, writer as unknown as RunEventWriter, ["events", "updates"]);
    expect(withEvents.libraryModes()).toEqual(["values", "updates"]);
    expect(withEvents.wantsEvents()).toBe(true);
    expect(new RunEmitter(log, writer as unknown as RunEventWriter, ["values"]).wantsEvents()).toBe(false);
  });

  it("sends v2 events with LangGraph's metadata only, and routes root chunks to their modes", async () => {
    const events = await emitted(["events", "updates"], (emitter) => {
      emitter.streamEvent({
        event: "on_chain_start",
        name: "plan",
        run_id: "r1",
        tags: ["graph:step:1"],
        parent_ids: ["root"],
        metadata: {
          langgraph_node: "plan",
          langgraph_step: 1,
          thread_id: "t",
          langgraph_auth_user: { user_id: "alice", scopes: ["notes:read"] },
          warrant_run_bound: { case_id: "C-1" },
          secret_key: "x",
        },
        data: { input: {} },
      });
      emitter.streamEvent({
        event: "on_chain_stream",
        name: "LangGraph",
        run_id: "root",
        parent_ids: [],
        data: { chunk: ["updates", { plan: { status: "running" } }] },
      });
      emitter.streamEvent({ event: "on_chain_start", name: "hidden", run_id: "r2", tags: ["langsmith:hidden"] });
    });
    expect(events).toEqual([
      {
        event: "events",
        data: {
          event: "on_chain_start",
          name: "plan",
          run_id: "r1",
          tags: ["graph:step:1"],
          metadata: { langgraph_node: "plan", langgraph_step: 1, thread_id: "t" },
          data: { input: {} },
          parent_ids: ["root"],
        },
      },
      { event: "updates", data: { plan: { status: "running" } } },
    ]);
  });
});
