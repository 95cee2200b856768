/**
 * A node as the graph runs it, without a LangSmith run tree per call when
 * nothing traces.
 *
 * `addNode` wraps a plain function in LangGraph's `RunnableCallable` (with
 * `trace: false`), which still calls core's `runWithConfig`; with no tracer
 * among the callbacks that builds a disabled `RunTree` (a UUIDv7, timestamps,
 * environment reads: about 40 µs) only to carry the task's config in
 * AsyncLocalStorage, where `interrupt()` and `ensureConfig()` (the planner's
 * model call, and with it the message stream) find it. Here the config is
 * carried in the same slot without the tree. When LangSmith tracing is on (the
 * environment, or a tracer among the run's callbacks) the node runs through
 * `runWithConfig` as before, so its calls still nest under the graph's trace.
 */
import { Runnable, type RunnableConfig } from "@langchain/core/runnables";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";

/** Where core keeps the current runnable config and the context variables (`Symbol.for`, shared across copies). */
const CHILD_CONFIG = Symbol.for("lc:child_config");
const CONTEXT_VARIABLES = Symbol.for("lc:context_variables");
const TRACER = "langchain_tracer";
/** The variables with which core's callback manager adds LangSmith's tracer to every run. */
const TRACING_VARIABLES = ["LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING", "LANGCHAIN_TRACING"];

/** Whether the environment turns LangSmith tracing on, as core reads it. */
export function tracingFromEnvironment(env: NodeJS.ProcessEnv = process.env): boolean {
  return TRACING_VARIABLES.some((name) => env[name] === "true");
}

/** Whether a run's callbacks (a manager or a list of handlers) include LangSmith's tracer. */
export function tracesCallbacks(callbacks: unknown): boolean {
  const handlers = Array.isArray(callbacks)
    ? callbacks
    : typeof callbacks === "object" && callbacks !== null
      ? (callbacks as { handlers?: unknown }).handlers
      : undefined;
  return Array.isArray(handlers) && handlers.some((handler) => (handler as { name?: unknown } | null)?.name === TRACER);
}

type NodeFunction<I, O> = (input: I, config: RunnableConfig) => Promise<O>;

class NodeRunnable<I, O> extends Runnable<I, O> {
  lc_namespace = ["warrant", "graph"];

  constructor(
    name: string,
    private readonly func: NodeFunction<I, O>,
  ) {
    super();
    this.name = name;
  }

  override async invoke(input: I, options?: Partial<RunnableConfig>): Promise<O> {
    const config = (options ?? {}) as RunnableConfig;
    const provider = AsyncLocalStorageProviderSingleton;
    if (tracingFromEnvironment() || tracesCallbacks(config.callbacks))
      return await provider.runWithConfig(config, () => this.func(input, config));
    const storage = provider.getInstance();
    const previous = storage.getStore() as Record<symbol, unknown> | undefined;
    const store: Record<PropertyKey, unknown> = { extra: { [CHILD_CONFIG]: config } };
    if (previous?.[CONTEXT_VARIABLES] !== undefined) store[CONTEXT_VARIABLES] = previous[CONTEXT_VARIABLES];
    return await storage.run(store, () => this.func(input, config));
  }
}

/** `func` as a graph node named `name` (pass the result to `addNode`). */
export function nodeRunnable<I, O>(name: string, func: NodeFunction<I, O>): Runnable<I, O> {
  return new NodeRunnable(name, func);
}
