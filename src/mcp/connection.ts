/**
 * What the host needs from one MCP server, whatever its transport: open (or
 * reopen) it, get a session for a caller, probe it, shut it down. stdio and
 * Streamable HTTP implement this in their own modules.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ToolListChangedNotificationSchema, type ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../auth/principal.js";
import type { ListedTool } from "./catalog.js";
import type { ElicitationHandler } from "../elicitation/client.js";

/** Who a request is for. */
export interface Caller {
  principal: Principal;
  threadId: string;
  /** The tool call attempt this session serves, when it is one: its `traceparent` goes in the request's `_meta`. */
  trace?: { runId: string; callId: string; attempt: number } | undefined;
}

/** The MCP revisions the host speaks: 2026-07-28 through the v2 SDK client, 2025-11-25 through the v1 one. */
export type Revision = "2026-07-28" | "2025-11-25";

/** What a successful open learned: the negotiated capabilities, the server's name and version, and the tools listed. */
export interface OpenedServer {
  capabilities: ServerCapabilities;
  info: ServerInfo;
  tools: ListedTool[];
  /** The revision the connection speaks (absent: 2025-11-25, as every server not through negotiation.ts). */
  revision?: Revision;
}

/** The server's `serverInfo` from initialize (part of every pinned tool definition). */
export interface ServerInfo {
  name: string;
  version: string;
}

/** Options of one request: its timeout and the signal that aborts it. */
export interface RequestOptions {
  timeout: number;
  signal?: AbortSignal;
}

/**
 * The requests the host sends on a caller's behalf, whatever the protocol
 * revision: the v1 client (2025-11-25) and the v2 client (2026-07-28) each
 * answer them (v1-requests.ts, modern-session.ts). Results are the raw
 * answers, normalized and redacted by the tool host.
 */
export interface McpRequests {
  /** The SDK client underneath: an elicitation's handler finds the call it belongs to by it. */
  readonly client: object;
  callTool(
    params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, string> },
    options: RequestOptions,
  ): Promise<unknown>;
  readResource(params: { uri: string; _meta?: Record<string, string> }, options: RequestOptions): Promise<unknown>;
  getPrompt(
    params: { name: string; arguments: Record<string, string>; _meta?: Record<string, string> },
    options: RequestOptions,
  ): Promise<unknown>;
  /** Tool calls as tasks (the tasks extension): only on 2026-07-28 (tasks.ts). */
  readonly tasks?: TaskRequests;
}

/** The 2025-11-25 requests of a v1 client. */
export function v1Requests(client: Client): McpRequests {
  return {
    client,
    callTool: (params, options) => client.callTool(params, undefined, options),
    readResource: (params, options) => client.readResource(params, options),
    getPrompt: (params, options) => client.getPrompt(params, options),
  };
}

/** A caller's way into a server. */
export interface CallerSession {
  /** Identity for the request's `_meta` (stdio servers, which have no token to read it from). */
  meta: Record<string, string> | undefined;
  /** Runs one request on the caller's client (for HTTP: with the caller's task token). */
  run<T>(work: (requests: McpRequests) => Promise<T>): Promise<T>;
}

export interface ServerConnection {
  /** Initialize, capability negotiation and tools/list; replaces any previous connection. */
  open(): Promise<OpenedServer>;
  session(caller: Caller): Promise<CallerSession>;
  /** Lists the tools again on the open connection (after `notifications/tools/list_changed`). */
  relist(): Promise<ListedTool[]>;
  /** A cheap liveness check; rejects when the server is gone. */
  probe(): Promise<void>;
  /** Closes every session and stops any process we started. */
  shutdown(): Promise<void>;
  /**
   * For a server that acts on each owner's behalf (OAuth `authorization_code`):
   * undefined when `owner` may call it now, else the URL the owner must visit,
   * carrying `state`. Absent on servers that need no user step.
   */
  authorizationFor?(owner: string, state: string): Promise<string | undefined>;
  /**
   * Exchanges the code the owner's browser brought back with the verifier of
   * the authorization `state` names, and stores the owner's tokens; first
   * checks the response's `iss` (RFC 9207, `IssuerMismatch`).
   */
  completeAuthorization?(owner: string, code: string, state: string, iss?: string): Promise<void>;
}

/** Callbacks a connection uses to report trouble to its supervisor. */
export interface ConnectionEvents {
  /** The server is certainly gone (its process exited, its stream closed). */
  down(reason: string): void;
  /** Something failed that may or may not mean the server is gone. */
  suspect(reason: string): void;
  /** The server said its tool list changed (`notifications/tools/list_changed`). */
  toolsChanged(): void;
  /** Answers the server's `elicitation/create` (elicitation.ts); without one the host declares no elicitation. */
  elicit?: ElicitationHandler | undefined;
}

/** How long initialize may take: servers started through tsx need a few seconds on a cold cache. */
export const OPEN_TIMEOUT_MS = 30_000;
/** How long a liveness probe may take. */
export const PROBE_TIMEOUT_MS = 5_000;
/** tools/list pages followed at most (a defence against a server that never stops paginating). */
const MAX_TOOL_PAGES = 50;

/** One tool as either SDK's `tools/list` answers it. */
interface ServedTool {
  name: string;
  description?: string | undefined;
  inputSchema: object;
  outputSchema?: object | undefined;
  annotations?: object | undefined;
}

/** Every tool over `tools/list` pages (`page` fetches one), in the host's shape; a server that never ends is an error. */
export async function collectTools(
  page: (cursor: string | undefined) => Promise<{ tools: ServedTool[]; nextCursor?: string | undefined }>,
): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  for (let count = 0; count < MAX_TOOL_PAGES; count += 1) {
    const result = await page(cursor);
    for (const tool of result.tools) {
      tools.push({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema as Record<string, unknown>,
        ...(tool.outputSchema ? { outputSchema: tool.outputSchema as Record<string, unknown> } : {}),
        annotations: tool.annotations as ListedTool["annotations"],
      });
    }
    cursor = result.nextCursor;
    if (cursor === undefined) return tools;
  }
  throw new Error(`tools/list did not end after ${MAX_TOOL_PAGES} pages`);
}

/** Lists every tool (following pagination) when the server advertises tools; none otherwise. */
export async function listAllTools(client: Client, capabilities: ServerCapabilities): Promise<ListedTool[]> {
  if (!capabilities.tools) return [];
  return collectTools((cursor) =>
    client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: OPEN_TIMEOUT_MS }),
  );
}

/** The server's name and version as it announced them ("" when it left them out). */
export function serverInfoOf(client: Client): ServerInfo {
  const info = client.getServerVersion();
  return { name: info?.name ?? "", version: info?.version ?? "" };
}

/** Has `client` tell `events` when the server's tool list changes. */
export function watchToolList(client: Client, events: ConnectionEvents): void {
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => events.toolsChanged());
}

/** The capabilities a connected client negotiated; a server that sent none is a protocol failure. */
export function negotiated(client: Client): ServerCapabilities {
  const capabilities = client.getServerCapabilities();
  if (!capabilities) throw new Error("the server did not complete initialization");
  return capabilities;
}

/** A task's state as `tasks/get` reports it (the tasks extension of 2026-07-28; tasks.ts speaks it). */
export interface TaskState {
  taskId: string;
  status: "working" | "input_required" | "completed" | "failed" | "cancelled";
  pollIntervalMs?: number | undefined;
  result?: Record<string, unknown> | undefined;
  error?: { code: number; message: string } | undefined;
  /** While `input_required`: what the task asks, by key (answered with `tasks/update`). */
  inputRequests?: Record<string, unknown> | undefined;
}

/** What a call that may become a task answered: its result, or a task. */
export type TaskAnswer = { kind: "result"; raw: unknown } | { kind: "task"; task: TaskState };

/** The task requests of one 2026-07-28 client (modern-session.ts); failures arrive as v1 errors (failures.ts). */
export interface TaskRequests {
  callTool(
    params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, string> },
    options: RequestOptions,
  ): Promise<TaskAnswer>;
  get(taskId: string, options: RequestOptions): Promise<TaskState>;
  cancel(taskId: string, options: RequestOptions): Promise<void>;
  /** Asks the run's owner what an `input_required` task asks; the answers by key, for `tasks/update`. */
  answer(inputRequests: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** `tasks/update`: the answers to what the task asked; the task goes back to working. */
  update(taskId: string, inputResponses: Record<string, unknown>, options: RequestOptions): Promise<void>;
}
