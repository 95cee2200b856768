/**
 * The run's owner: the principal who started the run, on whose behalf every
 * effect happens, whoever sends a later request (a reviewer's resume, say).
 * plan records the verified principal in `state.run.principal` at the run's
 * start; the other nodes read it here, with its permissions as they are now.
 */
import type { Principal } from "../auth/principal.js";
import { ConfigError } from "../errors.js";
import type { Host } from "../host.js";
import type { State } from "../state.js";
import { principalFrom } from "../run-config.js";

/** The owner as recorded, refreshed through the principal directory. */
export async function runOwner(
  state: Pick<State, "run">,
  config: Parameters<typeof principalFrom>[0],
  host: Pick<Host, "currentPrincipal">,
): Promise<Principal> {
  const recorded = state.run?.principal;
  if (recorded) return host.currentPrincipal(recorded);
  // A run started before owners were recorded: only its owner may act for it.
  const actor = principalFrom(config);
  if (state.run && actor.user_id !== state.run.owner)
    throw new ConfigError("principal_unknown", "the run's owner is not recorded; only the owner can continue it");
  return host.currentPrincipal(actor);
}
