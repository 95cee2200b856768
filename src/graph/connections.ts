/**
 * Per-user OAuth before a step's calls run (issue 25): which servers of this
 * step's allowed or reviewed calls the run's owner has not authorized Warrant
 * for yet, each with the URL to do it. authorize asks when the step is
 * decided; human_review asks again after every resume, so a resume value
 * cannot claim an authorization that the token store does not hold.
 */
import type { Host } from "../host.js";
import type { Decision } from "../policy/decision.js";
import type { PendingConnection, ReviewWaits, State } from "../state.js";

export interface ConnectionRequest {
  thread_id: string;
  user_id: string;
  tenant: string;
}

/** The servers still to authorize for `decisions` (allowed and reviewed calls only), in the order first proposed. */
export async function pendingConnections(
  host: Host,
  decisions: readonly Decision[],
  request: ConnectionRequest,
  /** The connections asked for before (a re-ask keeps when the owner was first asked). */
  earlier: readonly PendingConnection[] = [],
): Promise<PendingConnection[]> {
  const tools = await host.tools();
  if (!tools.beginAuthorization) return [];
  const callsByServer = new Map<string, string[]>();
  for (const decision of decisions) {
    if (decision.type === "deny") continue;
    callsByServer.set(decision.server, [...(callsByServer.get(decision.server) ?? []), decision.call_id]);
  }
  const pending: PendingConnection[] = [];
  for (const [server, callIds] of callsByServer) {
    const asked = await tools.beginAuthorization(server, request).catch(() => undefined);
    // A server that cannot be asked right now (down, discovery failing) is left to execute, which reports it typed.
    const first = earlier.find((connection) => connection.server === server)?.requested_at;
    if (asked) pending.push({ ...asked, requested_at: first ?? new Date(host.now()).toISOString(), call_ids: callIds });
  }
  return pending;
}

/** The interrupt value of an authorization pause: no `action_requests`, so a chat client cannot "approve" it. */
export function connectPayload(pending: readonly PendingConnection[]) {
  return {
    authorization_required: pending.map(({ server, authorization_url, expires_at, call_ids }) => ({
      server,
      authorization_url,
      expires_at,
      action_ids: call_ids,
    })),
  };
}

/**
 * The run's review waits with each pending connection's wait up to `now`,
 * under its first call (one entry per connection: its calls wait together).
 */
export function connectionWaits(state: State, now: number): ReviewWaits | null {
  const runId = state.run?.run_id;
  if (!runId) return state.review_waits ?? null;
  const byCall = state.review_waits?.run_id === runId ? { ...state.review_waits.by_call } : {};
  for (const connection of state.connect ?? []) {
    const key = connection.call_ids[0];
    if (key === undefined) continue;
    const waited = Math.max(0, now - Date.parse(connection.requested_at));
    byCall[key] = Math.max(Object.hasOwn(byCall, key) ? (byCall[key] ?? 0) : 0, waited);
  }
  return { run_id: runId, by_call: byCall };
}
