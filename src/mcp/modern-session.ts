/**
 * stdio MCP servers on the 2026-07-28 revision, through the v2 SDK client
 * (`@modelcontextprotocol/client`): no initialize and no session, each
 * request carries the revision and the host's capabilities in its `_meta`,
 * `server/discover` stands for the handshake (and for the liveness probe,
 * `ping` being gone from the revision).
 *
 * An `input_required` answer is fulfilled by the client itself through the
 * same `elicitation/create` handler as a 2025-11-25 server's elicitation,
 * form or URL mode (the owner is asked; the call's timeout is paused while they answer), then
 * re-sent with the `inputResponses` under a new request id: to the host it
 * is one `tools/call`, so its ledger row and idempotency key stay the same.
 *
 * A broken stream is never re-issued by the SDK: when the server process dies or closes its end, the client
 * rejects every request in flight (`ConnectionClosed`, classified `server_unavailable`) and keeps no request to
 * send again; the input_required driver re-sends only after an answer arrived. A write cut off that way is
 * `outcome_unknown` and settled by the write protocol's status check (src/execution/run-write.ts), never resent
 * blindly (test/int/calendar-round-trips.test.ts counts the requests the server received).
 *
 * Tool list changes arrive on a `subscriptions/listen` stream the host opens
 * before it lists the tools (the revision sends no unsolicited
 * notifications): they re-list as on 2025-11-25. A stream the server ends
 * while its process lives takes the server down, so the reconnect listens
 * again (fail closed: a host deaf to changes would miss a changed definition).
 *
 * v2 failures are re-thrown as the v1 errors failures.ts classifies, so the
 * tool host's typed codes do not depend on the revision.
 */
import { Client, ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError, type ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { ListedTool } from "./catalog.js";
import {
  collectTools,
  OPEN_TIMEOUT_MS,
  PROBE_TIMEOUT_MS,
  type ConnectionEvents,
  type McpRequests,
  type RequestOptions,
  type ServerConnection,
} from "./connection.js";
import { isUrlRefusal, type ElicitationHandler } from "../elicitation/client.js";
import { clientSlot, overSlot, stdioParameters, type StdioServer } from "./stdio-process.js";
import { interceptTaskAnswers, taskRequests } from "./tasks.js";

export const MODERN_REVISION = "2026-07-28";

/** True when `error` says the server does not speak the 2026-07-28 revision (it did not answer `server/discover` with it). */
export function isNotModern(error: unknown): boolean {
  return error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed;
}

/** A v2 failure as the v1 error failures.ts classifies (same codes whatever the revision). */
export function asV1Error(error: unknown, signal?: AbortSignal): unknown {
  if (signal?.aborted && signal.reason instanceof Error) return signal.reason;
  if (error instanceof ProtocolError) return new McpError(error.code, error.message, error.data);
  // An HTTP refusal (a Streamable HTTP server's 401, 403, 5xx) is the v1 transport's error with the same status.
  if (error instanceof SdkHttpError) return new StreamableHTTPError(error.status, error.message);
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return new McpError(ErrorCode.RequestTimeout, error.message);
    if (error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected)
      return new McpError(ErrorCode.ConnectionClosed, error.message);
    return new McpError(ErrorCode.InternalError, error.message);
  }
  return error;
}

async function translated<T>(options: RequestOptions, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asV1Error(error, options.signal);
  }
}

/** Each v2 client's elicitation handler: a task's `inputRequests` are answered by it too (tasks.ts). */
const elicitors = new WeakMap<Client, ElicitationHandler>();

/**
 * The host's v2 client, pinned to 2026-07-28, declaring form and URL elicitation when `elicit` answers it.
 *
 * A URL-mode request of an `input_required` answer goes through the same handler as on 2025-11-25 (URL checks,
 * owner consent, audit and ledger records), with two differences the revision makes. It has no `elicitationId`
 * and no `notifications/elicitation/complete` (the SDK's 2026 schema drops both), so the question's server id is
 * its key among the answer's `inputRequests`, and no completion is ever recorded on this revision. And an input
 * response cannot be an error: a refused URL reaches the server as `decline` (the refusal is audited with
 * `elicitation_url_refused` and recorded on the call's ledger row, as on 2025-11-25; nobody is asked).
 */
export function createModernClient(elicit: ElicitationHandler | undefined): Client {
  const info = { name: "warrant-host", version: "0.1.0" };
  const negotiation = { versionNegotiation: { mode: { pin: MODERN_REVISION } } };
  if (!elicit) return new Client(info, negotiation);
  const client = new Client(info, { ...negotiation, capabilities: { elicitation: { form: {}, url: {} } } });
  elicitors.set(client, elicit);
  client.setRequestHandler("elicitation/create", async (request, context) => {
    const { params } = request;
    if (params.mode !== "url") return elicit(client, params, context.mcpReq.signal);
    try {
      return await elicit(client, { ...params, elicitationId: String(context.mcpReq.id) }, context.mcpReq.signal);
    } catch (error) {
      if (isUrlRefusal(error)) return { action: "decline" };
      throw error;
    }
  });
  return client;
}

export function requestsOf(client: Client): McpRequests {
  return {
    client,
    callTool: (params, options) => translated(options, () => client.callTool(params, options)),
    readResource: (params, options) =>
      translated(options, () => client.readResource(params, { ...options, cacheMode: "bypass" })),
    getPrompt: (params, options) => translated(options, () => client.getPrompt(params, options)),
    tasks: taskRequests(client, (error, options) => asV1Error(error, options.signal), elicitors.get(client)),
  };
}

/** Every tool (following pagination), never from the client's response cache: a pin must see what the server serves now. */
export async function listModernTools(client: Client, capabilities: ServerCapabilities): Promise<ListedTool[]> {
  if (!capabilities.tools) return [];
  return collectTools((cursor) =>
    client.listTools(cursor === undefined ? {} : { cursor }, { timeout: OPEN_TIMEOUT_MS, cacheMode: "bypass" }),
  );
}

/**
 * The SDK's stdio transport under another name: the SDK probes a subclass in
 * place, where it would spawn a disposable sibling process for the probe of
 * its base class. One process per open, as on 2025-11-25; a server that
 * does not speak 2026-07-28 is stopped and the v1 client starts its own.
 */
class InPlaceStdioTransport extends StdioClientTransport {}

/** Opens the stream `notifications/tools/list_changed` arrives on; resolves when the stream has ended. */
export async function listenForToolChanges(
  client: Client,
): Promise<{ ended: Promise<"local" | "graceful" | "remote"> }> {
  const subscription = await client.listen({ toolsListChanged: true }, { timeout: OPEN_TIMEOUT_MS });
  return { ended: subscription.closed };
}

/** A stdio server spoken to on 2026-07-28; `open` rejects with {@link isNotModern} when the server does not speak it. */
export function modernStdioConnection(server: StdioServer, events: ConnectionEvents): ServerConnection {
  const slot = clientSlot<Client>(events);

  const capabilitiesOf = (client: Client): ServerCapabilities => {
    const capabilities = client.getServerCapabilities();
    if (!capabilities) throw new Error("the server did not answer server/discover");
    return capabilities as ServerCapabilities;
  };

  return {
    async open() {
      const client = createModernClient(events.elicit);
      // Only the current client's notifications count: one still opening lists its tools itself.
      client.setNotificationHandler("notifications/tools/list_changed", () => {
        if (slot.current() === client) events.toolsChanged();
      });
      // Set inside the open: an object, so the check after it sees what the open stored.
      const subscription: { ended?: Promise<string> } = {};
      const opened = await slot.open(client, async () => {
        const transport = new InPlaceStdioTransport(stdioParameters(server));
        await client.connect(transport, { timeout: OPEN_TIMEOUT_MS });
        interceptTaskAnswers(transport);
        const capabilities = capabilitiesOf(client);
        // Listening before listing: a change is either in the listing or on the stream (as unsolicited ones on 2025-11-25).
        if (capabilities.tools?.listChanged) subscription.ended = (await listenForToolChanges(client)).ended;
        const tools = await listModernTools(client, capabilities);
        const info = { name: client.getServerVersion()?.name ?? "", version: client.getServerVersion()?.version ?? "" };
        return { capabilities, info, tools, revision: "2026-07-28" };
      });
      void subscription.ended?.then((how) => {
        if (how === "local") return;
        // After the exit's own report (the slot's onclose), which names the real reason.
        setTimeout(() => {
          if (slot.current() === client) events.down("the server ended the tools/list_changed subscription");
        }, 0).unref();
      });
      return opened;
    },
    ...overSlot(slot, {
      requests: requestsOf,
      list: (client) => listModernTools(client, capabilitiesOf(client)),
      probe: (client) => client.discover({ timeout: PROBE_TIMEOUT_MS }),
    }),
  };
}
