/**
 * src/graph/node-runnable.ts: a node runs without a disabled LangSmith run
 * tree when nothing traces, and everything a node finds through the
 * AsyncLocalStorage config still works (interrupt and resume, ensureConfig's
 * callbacks); with tracing on it goes through core's runWithConfig as before.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { ensureConfig } from "@langchain/core/runnables";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt } from "@langchain/langgraph";
import { RunTree } from "langsmith";
import { afterAll, afterEach, describe, expect, test, vi } from "vitest";
import {
  nodeRunnable,
  tracesCallbacks,
  tracingFromEnvironment,
  useLeanRunContext,
} from "../../src/graph/node-runnable.js";

const Counter = Annotation.Root({
  count: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  answer: Annotation<string | null>({ reducer: (_a, b) => b, default: () => null }),
});
type CounterState = typeof Counter.State;

function countingGraph() {
  const seen: { threadId: unknown; implicitThreadId: unknown }[] = [];
  const step = nodeRunnable("step", async (state: CounterState, config) => {
    seen.push({
      threadId: config.configurable?.thread_id,
      implicitThreadId: AsyncLocalStorageProviderSingleton.getRunnableConfig()?.configurable?.thread_id,
    });
    return new Command({ update: { count: 1 }, goto: state.count + 1 >= 3 ? END : "step" });
  });
  const graph = new StateGraph(Counter)
    .addNode("step", step, { ends: ["step", END] })
    .addEdge(START, "step")
    .compile({ checkpointer: new MemorySaver() });
  return { graph, seen };
}

/** Counts core's runWithConfig calls while `run` runs. */
async function countRunWithConfig(run: () => Promise<unknown>): Promise<number> {
  const spy = vi.spyOn(AsyncLocalStorageProviderSingleton, "runWithConfig");
  try {
    await run();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("nodeRunnable", () => {
  test("runs the node with the task's config, explicit and implicit, and its Command routes", async () => {
    const { graph, seen } = countingGraph();
    const values = await graph.invoke({}, { configurable: { thread_id: "t1" } });
    expect(values.count).toBe(3);
    expect(seen).toEqual(Array.from({ length: 3 }, () => ({ threadId: "t1", implicitThreadId: "t1" })));
  });

  test("no runWithConfig of its own when nothing traces: one fewer per node call than a plain function", async () => {
    for (const name of ["LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_TRACING"])
      vi.stubEnv(name, "false");
    const plain = new StateGraph(Counter)
      .addNode(
        "step",
        async (state: CounterState) => new Command({ update: { count: 1 }, goto: state.count + 1 >= 3 ? END : "step" }),
        {
          ends: ["step", END],
        },
      )
      .addEdge(START, "step")
      .compile();
    const light = countingGraph().graph;
    const plainCalls = await countRunWithConfig(() => plain.invoke({}));
    const lightCalls = await countRunWithConfig(() => light.invoke({}, { configurable: { thread_id: "t2" } }));
    expect(plainCalls - lightCalls).toBe(3);
  });

  test("with tracing on in the environment it runs through runWithConfig", async () => {
    vi.stubEnv("LANGSMITH_TRACING", "true");
    const node = nodeRunnable("n", async (input: number) => input + 1);
    const spy = vi.spyOn(AsyncLocalStorageProviderSingleton, "runWithConfig");
    try {
      expect(await node.invoke(1, { callbacks: [] })).toBe(2);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  test("with a tracer among the callbacks it runs through runWithConfig", async () => {
    vi.stubEnv("LANGSMITH_TRACING", "false");
    const tracer = new (class extends BaseCallbackHandler {
      name = "langchain_tracer";
    })();
    const node = nodeRunnable("n", async (input: number) => input * 2);
    const spy = vi.spyOn(AsyncLocalStorageProviderSingleton, "runWithConfig");
    try {
      expect(await node.invoke(4, { callbacks: [tracer] })).toBe(8);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(await node.invoke(4, { callbacks: [] })).toBe(8);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  test("ensureConfig inside the node sees the run's callbacks (the planner's message stream)", async () => {
    const handler = new (class extends BaseCallbackHandler {
      name = "probe";
    })();
    let found: unknown[] = [];
    const node = nodeRunnable("n", async () => {
      const callbacks = ensureConfig().callbacks as unknown;
      found = Array.isArray(callbacks) ? callbacks : ((callbacks as { handlers?: unknown[] }).handlers ?? []);
      return 0;
    });
    await node.invoke(0, { callbacks: [handler] });
    expect(found).toContain(handler);
  });

  test("interrupt() and resume work inside it", async () => {
    const ask = nodeRunnable("ask", async () => ({ answer: String(interrupt({ question: "ok?" })) }));
    const graph = new StateGraph(Counter)
      .addNode("ask", ask)
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t3" } };
    const first = await graph.invoke({}, config);
    expect((first as { __interrupt__?: { value: unknown }[] }).__interrupt__?.[0]?.value).toEqual({ question: "ok?" });
    const resumed = await graph.invoke(new Command({ resume: "yes" }), config);
    expect(resumed.answer).toBe("yes");
  });

  test("a node's error reaches the caller unchanged", async () => {
    const node = nodeRunnable("n", async () => {
      throw new RangeError("boom");
    });
    await expect(node.invoke(0)).rejects.toBeInstanceOf(RangeError);
  });
});

describe("tracing detection", () => {
  test("reads the four variables core reads, only the value true", () => {
    expect(tracingFromEnvironment({})).toBe(false);
    expect(tracingFromEnvironment({ LANGSMITH_TRACING: "true" })).toBe(true);
    expect(tracingFromEnvironment({ LANGCHAIN_TRACING_V2: "true" })).toBe(true);
    expect(tracingFromEnvironment({ LANGSMITH_TRACING: "1", LANGCHAIN_TRACING: "TRUE" })).toBe(false);
  });

  test("finds the tracer in a handler list or a manager, tolerates anything else", () => {
    const tracer = { name: "langchain_tracer" };
    expect(tracesCallbacks([tracer])).toBe(true);
    expect(tracesCallbacks({ handlers: [{ name: "other" }, tracer] })).toBe(true);
    for (const value of [
      undefined,
      null,
      3,
      "langchain_tracer",
      [],
      [null, 1, "x"],
      { handlers: "x" },
      { handlers: [null] },
    ])
      expect(tracesCallbacks(value)).toBe(false);
  });
});

describe("useLeanRunContext", () => {
  const provider = AsyncLocalStorageProviderSingleton;
  const stock = provider.runWithConfig;
  afterAll(() => {
    provider.runWithConfig = stock;
  });

  /** A graph whose conditional edge reports what context it runs in, and whose node interrupts once. */
  function edgeGraph(seen: unknown[]) {
    const ask = nodeRunnable("ask", async () => ({ answer: String(interrupt({ question: "go?" })) }));
    return new StateGraph(Counter)
      .addNode("ask", ask)
      .addEdge(START, "ask")
      .addConditionalEdges("ask", () => {
        seen.push(provider.getInstance().getStore());
        return END;
      })
      .compile({ checkpointer: new MemorySaver() });
  }

  test("edges and channel writes run without a run tree when nothing traces; interrupt and resume still work", async () => {
    vi.stubEnv("LANGSMITH_TRACING", "false");
    useLeanRunContext();
    useLeanRunContext();
    const seen: unknown[] = [];
    const graph = edgeGraph(seen);
    const config = { configurable: { thread_id: "lean-1" } };
    await graph.invoke({}, config);
    const resumed = await graph.invoke(new Command({ resume: "yes" }), config);
    expect(resumed.answer).toBe("yes");
    expect(seen).toHaveLength(1);
    expect(seen[0]).not.toBeInstanceOf(RunTree);
    expect(provider.getRunnableConfig()).toBeUndefined();
  });

  test("with tracing on, or when the caller asks for no root run tree, core's own runWithConfig runs", async () => {
    useLeanRunContext();
    const stores: unknown[] = [];
    const look = () => stores.push(provider.getInstance().getStore());
    vi.stubEnv("LANGSMITH_TRACING", "true");
    provider.runWithConfig({ callbacks: [] }, look);
    vi.stubEnv("LANGSMITH_TRACING", "false");
    provider.runWithConfig({}, look, true);
    provider.runWithConfig({ configurable: { thread_id: "x" } }, look);
    expect(stores[0]).toBeInstanceOf(RunTree);
    expect(stores[1]).toBeUndefined();
    expect(stores[2]).not.toBeInstanceOf(RunTree);
    expect((stores[2] as { extra: Record<symbol, unknown> }).extra[Symbol.for("lc:child_config")]).toEqual({
      configurable: { thread_id: "x" },
    });
  });
});
