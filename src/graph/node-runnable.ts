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
    if (tracingFromEnvironment() || tracesCallbacks(config.callbacks))
      return await AsyncLocalStorageProviderSingleton.runWithConfig(config, () => this.func(input, config));
    return await withConfigInContext(config, () => this.func(input, config));
  }
}

/** Runs `callback` with `config` where core's `getRunnableConfig` finds it, keeping the context variables. */
function withConfigInContext<T>(config: RunnableConfig | undefined, callback: () => T): T {
  const storage = AsyncLocalStorageProviderSingleton.getInstance();
  const previous = storage.getStore() as Record<symbol, unknown> | undefined;
  const store: Record<PropertyKey, unknown> = { extra: { [CHILD_CONFIG]: config } };
  if (previous?.[CONTEXT_VARIABLES] !== undefined) store[CONTEXT_VARIABLES] = previous[CONTEXT_VARIABLES];
  return storage.run(store, callback);
}

type RunWithConfig = typeof AsyncLocalStorageProviderSingleton.runWithConfig;
let leanRunWithConfig: RunWithConfig | undefined;

/**
 * Makes core's `runWithConfig` carry the config without a run tree when nothing traces, for the calls LangGraph
 * makes around every node besides the node itself: each channel write (`ChannelWrite`) and each conditional edge
 * (`Branch`) is a `RunnableCallable`, which goes through `runWithConfig` even with `trace: false`, and so builds a
 * disabled `RunTree` and a callback manager it only reads for a tracer. LangGraph offers no option to skip that.
 * With tracing on (the environment or a tracer among the callbacks), or when the caller asks for no root run tree,
 * core's own `runWithConfig` runs unchanged. Idempotent.
 */
export function useLeanRunContext(): void {
  const provider = AsyncLocalStorageProviderSingleton;
  if (leanRunWithConfig !== undefined && provider.runWithConfig === leanRunWithConfig) return;
  const traced: RunWithConfig = provider.runWithConfig.bind(provider);
  leanRunWithConfig = (config, callback, avoidCreatingRootRunTree) =>
    avoidCreatingRootRunTree || tracingFromEnvironment() || tracesCallbacks(config?.callbacks)
      ? traced(config, callback, avoidCreatingRootRunTree)
      : withConfigInContext(config, callback);
  provider.runWithConfig = leanRunWithConfig;
}

/** `func` as a graph node named `name` (pass the result to `addNode`). */
export function nodeRunnable<I, O>(name: string, func: NodeFunction<I, O>): Runnable<I, O> {
  return new NodeRunnable(name, func);
}
