/**
 * `npx tsx bench/run-tree-repro.ts`: the minimal reproduction for an
 * upstream report (langchain-ai/langchainjs, `@langchain/core`): with
 * tracing off, every `RunnableCallable` LangGraph wraps a node, a channel
 * write or a conditional edge in still goes through core's
 * `AsyncLocalStorageProviderSingleton.runWithConfig`, which configures a
 * callback manager and builds a disabled LangSmith `RunTree` (a UUIDv7, a
 * timestamp, environment reads) only to carry the task's config in
 * AsyncLocalStorage. `trace: false` on the callable does not skip it and
 * LangGraph offers no option that does.
 *
 * No Warrant code is imported: a two-node ReAct-shaped `StateGraph` (agent →
 * tools → agent, a conditional edge out of agent) runs `STEPS` tool steps with
 * tracing off, and the script prints, per tool step, core's `runWithConfig`
 * calls and how many of them built a disabled run tree (no tracer among the
 * callbacks, a root run tree not declined: core's own condition), then the
 * cost of one such call beside carrying the same config in AsyncLocalStorage
 * without the tree (what Warrant's `useLeanRunContext` does when nothing
 * traces, src/graph/node-runnable.ts). Printed as Markdown, to paste into
 * the report with the versions it ran on.
 */
import { createRequire } from "node:module";
import { Annotation, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";

for (const name of ["LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_TRACING"])
  process.env[name] = "false";

const STEPS = 5;
const TIMED_CALLS = 20_000;

const State = Annotation.Root({
  calls: Annotation<number>({ reducer: (_before, after) => after, default: () => 0 }),
  results: Annotation<number[]>({ reducer: (before, after) => [...before, ...after], default: () => [] }),
});
type Shape = typeof State.State;

/** agent proposes a call until STEPS have run; tools runs it; the conditional edge routes. */
function reactShapedGraph() {
  return new StateGraph(State)
    .addNode("agent", async (state: Shape) => ({ calls: state.calls + 1 }))
    .addNode("tools", async (state: Shape) => ({ results: [state.calls] }))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state: Shape) => (state.results.length < STEPS ? "tools" : END), ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
}

type RunWithConfig = typeof AsyncLocalStorageProviderSingleton.runWithConfig;

/** Counts core's runWithConfig calls while `run` runs, and those that build a disabled RunTree. */
async function counted(run: () => Promise<unknown>): Promise<{ calls: number; trees: number }> {
  const original: RunWithConfig = AsyncLocalStorageProviderSingleton.runWithConfig;
  const core: RunWithConfig = original.bind(AsyncLocalStorageProviderSingleton);
  const tally = { calls: 0, trees: 0 };
  AsyncLocalStorageProviderSingleton.runWithConfig = <T>(
    config: Parameters<RunWithConfig>[0],
    callback: () => T,
    avoidCreatingRootRunTree?: boolean,
  ): T => {
    tally.calls += 1;
    // core: a tracer among the callbacks reuses its run tree; otherwise a disabled one unless declined.
    if (!avoidCreatingRootRunTree && !hasTracer(config?.callbacks)) tally.trees += 1;
    return core(config, callback, avoidCreatingRootRunTree);
  };
  try {
    await run();
    return tally;
  } finally {
    AsyncLocalStorageProviderSingleton.runWithConfig = original;
  }
}

function hasTracer(callbacks: unknown): boolean {
  const handlers = Array.isArray(callbacks) ? callbacks : (callbacks as { handlers?: unknown } | undefined)?.handlers;
  return (
    Array.isArray(handlers) && handlers.some((handler) => (handler as { name?: unknown }).name === "langchain_tracer")
  );
}

/** Microseconds a call: core's runWithConfig, and the same config carried without a tree. */
function timedCalls(): { core: number; withoutTree: number } {
  const config = { configurable: { thread_id: "t" }, callbacks: [], tags: [], metadata: {} };
  const storage = AsyncLocalStorageProviderSingleton.getInstance();
  const time = (call: () => unknown) => {
    for (let index = 0; index < 2_000; index += 1) call();
    const started = process.hrtime.bigint();
    for (let index = 0; index < TIMED_CALLS; index += 1) call();
    return Number(process.hrtime.bigint() - started) / 1_000 / TIMED_CALLS;
  };
  return {
    core: time(() => AsyncLocalStorageProviderSingleton.runWithConfig(config, () => 0)),
    withoutTree: time(() => storage.run({ extra: { [Symbol.for("lc:child_config")]: config } }, () => 0)),
  };
}

function version(name: string): string {
  const require = createRequire(import.meta.url);
  return (require(`${name}/package.json`) as { version: string }).version;
}

const graph = reactShapedGraph();
await graph.invoke({}, { configurable: { thread_id: "warm-up" } });
const { calls, trees } = await counted(() => graph.invoke({}, { configurable: { thread_id: "measured" } }));
const cost = timedCalls();
const perStep = (count: number) => (count / STEPS).toFixed(1);
console.log(
  [
    `### A disabled RunTree per node, channel write and edge with tracing off`,
    ``,
    `@langchain/langgraph ${version("@langchain/langgraph")}, @langchain/core ${version("@langchain/core")}, ` +
      `langsmith ${version("langsmith")}, Node ${process.versions.node}; LANGSMITH_TRACING=false, no callbacks.`,
    ``,
    `A two-node graph (agent → tools → agent, a conditional edge out of agent), ${STEPS} tool steps:`,
    ``,
    `| per tool step | count |`,
    `|---|---:|`,
    `| \`runWithConfig\` calls | ${perStep(calls)} |`,
    `| of them building a disabled \`RunTree\` | ${perStep(trees)} |`,
    ``,
    `One \`runWithConfig\` call: ${cost.core.toFixed(1)} µs; the same config carried in AsyncLocalStorage ` +
      `without the tree: ${cost.withoutTree.toFixed(1)} µs (${TIMED_CALLS} calls each, after a warm-up).`,
    ``,
    `Expected: with no tracer configured, no run tree is built (the config alone is what \`getRunnableConfig\` ` +
      `and \`interrupt()\` read). \`RunnableCallable\`'s \`trace: false\` does not avoid it, and LangGraph has no ` +
      `option that does.`,
  ].join("\n"),
);
