/**
 * Per-user OAuth before a step's calls run (issue 25): which servers of this
 * step's allowed or reviewed calls the run's owner has not authorized Warrant
 * for yet, each with the URL to do it. authorize asks when the step is
 * decided; human_review asks again after every resume, so a resume value
 * cannot claim an authorization that the token store does not hold.
 */
import type { Host } from "../host.js";
import type { Decision } from "../policy/decision.js";
import type { PendingConnection } from "../state.js";

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
    if (asked) pending.push({ ...asked, call_ids: callIds });
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
