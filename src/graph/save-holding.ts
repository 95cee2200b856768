/**
 * Warrant's graphs declare to the checkpointer which of a run's saves may be
 * held for the write-ahead step (src/checkpoint/checkpointer.ts
 * `SaveHolding`): every node opens holding for its thread as it starts, so a
 * run (a first run, a resume, a retry) holds from its first node on; observe,
 * the only node that routes to END, declares the run's end
 * (`endRunAtNextCheckpoint`), so the final checkpoint is written before the
 * run reports done. A host without a checkpointer to declare to (tests' memory
 * host) declares nothing, and every save is written at once.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Host } from "../host.js";
import { threadIdFrom } from "../run-config.js";

/** `node`, opening holding for its thread's saves as it starts. */
export function holdingSaves<F extends (...args: never[]) => Promise<unknown>>(host: Host, node: F): F {
  if (!host.saveHolding) return node;
  const saveHolding = host.saveHolding.bind(host);
  const wrapped = async (...args: Parameters<F>) => {
    (await saveHolding()).openHolding(threadIdFrom((args as unknown[])[1] as LangGraphRunnableConfig));
    return node(...args);
  };
  return wrapped as unknown as F;
}

/** The run of the thread `config` names ends with its next checkpoint: it is written at once, with all held. */
export async function endRunAtNextCheckpoint(host: Host, config: LangGraphRunnableConfig): Promise<void> {
  if (host.saveHolding) (await host.saveHolding()).closeHoldingAtNextCheckpoint(threadIdFrom(config));
}
