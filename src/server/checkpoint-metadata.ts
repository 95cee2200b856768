/**
 * Checkpoints carry the run that wrote them: `run_id`, `assistant_id`,
 * `graph_id` and the run's own (client) metadata, as the LangGraph API
 * server does, so `POST /threads/{id}/history` with `{"metadata": {...}}`
 * finds one run's checkpoints. LangGraph.js hands the run's config to
 * `put` but stores only its own keys (source, step, parents); this wrapper
 * adds the run's metadata before the saver writes it.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";

/** Keys LangChain or LangGraph add to a run's metadata for tracing: not the run's. */
const TRACING_PREFIXES = ["ls_", "langgraph_", "__"];
/** Keys the checkpoint's own metadata owns: never overwritten by the run's. */
const CHECKPOINT_KEYS = new Set(["source", "step", "parents", "writes", "thread_id", "checkpoint_ns", "checkpoint_id"]);

/** The part of a run's config metadata that belongs on its checkpoints. */
export function runMetadataOf(config: { metadata?: Record<string, unknown> } | undefined): Record<string, unknown> {
  const metadata = config?.metadata ?? {};
  return Object.fromEntries(
    Object.entries(metadata).filter(
      ([key]) => !CHECKPOINT_KEYS.has(key) && !TRACING_PREFIXES.some((prefix) => key.startsWith(prefix)),
    ),
  );
}

/**
 * The same saver, with `put` adding the run's metadata. Every other method
 * is the saver's own, bound to it (so private fields keep working), once:
 * LangGraph reads `getNextVersion` and `putWrites` off the saver at every
 * superstep.
 */
export function withRunMetadata<S extends BaseCheckpointSaver>(saver: S): S {
  const put: BaseCheckpointSaver["put"] = (config, checkpoint, metadata, versions) =>
    saver.put(
      config,
      checkpoint,
      { ...runMetadataOf(config as { metadata?: Record<string, unknown> }), ...metadata },
      versions,
    );
  const bound = new Map<PropertyKey, { method: unknown; bound: unknown }>();
  return new Proxy(saver, {
    get(target, property) {
      if (property === "put") return put;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      // Bound again only when the property now holds another function.
      const known = bound.get(property);
      if (known?.method === value) return known.bound;
      const method = (value as (...args: unknown[]) => unknown).bind(target);
      bound.set(property, { method: value, bound: method });
      return method;
    },
  });
}
