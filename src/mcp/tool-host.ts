/**
 * Connects the configured MCP servers (stdio through the MCP SDK client,
 * Streamable HTTP with task tokens), builds the catalog of contracted tools,
 * and calls them. Calls go through the SDK client so that we see the raw
 * result (`structuredContent`, `isError`) and validate arguments ourselves.
 *
 * Each server has a health supervisor (health.ts): a crash is noticed from the
 * transport, the server's tools leave the effective set while it is down, and
 * it is reconnected in the background with backoff, its tools listed again.
 */
import { randomBytes } from "node:crypto";
import type { Principal } from "../auth/principal.js";
import { isIssuerMismatch, type ToolErrorCode } from "../errors.js";
import type { WarrantConfig } from "../policy/config.js";
import { logLine } from "../secrets/process-scanner.js";
import type { CatalogTool } from "../policy/contracts.js";
import { createSecretScanner, type SecretScanner } from "../secrets/scanner.js";
import type { RunStart } from "../audit/chain.js";
import type { AuditStore } from "../audit/events.js";
import {
  connectionFactory,
  ephemeralTokenSettings,
  type OAuthHostOptions,
  type TokenSettings,
} from "./connection-factory.js";
import type { McpRequests, Revision, TaskState } from "./connection.js";
import { classifyCallFailure, classifyRequestFailure, type Failure } from "./failures.js";
import { logHealth, type HealthEvent } from "./health.js";
import { withHostValues, type HostValues } from "./host-values.js";
import { createListings } from "./listings.js";
import { normalizeResult, type NormalizedResult } from "./normalize.js";
import type { PinStore } from "./pins.js";
import { normalizePrompt, normalizeResource, type PromptResult } from "./resources.js";
import { resultRedactor, type Site } from "../audit/result-redaction.js";
import { createServerSet, type ServerEntry } from "./servers.js";
import { callAsTask, isTaskWaiting, lookAtTask, TaskEnded, type TaskHooks } from "./tasks.js";
import {
  elicitableCall,
  elicitationHandler,
  type ElicitationBroker,
  type ElicitationRecord,
} from "../elicitation/client.js";
import { checkCredentials } from "../oauth/provider.js";
import { AUTHORIZATION_TTL_MS, openState, sealState, type AuthorizationBinding } from "../oauth/state.js";

export interface CallOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Who the call is for: task tokens for HTTP servers are minted from it, stdio servers get it in `_meta`. */
  principal: Principal;
  threadId: string;
  /** The call as the audit names it: a redaction in its result is recorded under this run and call. */
  record?: { call_id: string; run_id: string; attempt?: number | undefined; run?: RunStart | undefined };
  /** Collects the call's elicitations (id and outcome) as they end, for its ledger row. */
  elicited?: ElicitationRecord[];
  /** For a tool whose contract allows tasks: where the task id goes, or the task to resume (tasks.ts). */
  task?: TaskHooks;
}

type TaskLook = Pick<CallOptions, "principal" | "threadId" | "timeoutMs"> & { cancel?: boolean };

/** The tools side of the host: catalog, health, calls, resources and prompts. */
export interface ToolHost {
  /** Contracted tools of the servers as last listed (a server that is down keeps its last listing). */
  catalog(): CatalogTool[];
  /** Above this many eligible tools, only the most relevant are offered. */
  readonly maxTools: number;
  /** Whether a server is currently usable. */
  isHealthy(server: string): boolean;
  /** The MCP revision a server was spoken to in at its last connect (negotiated or pinned; undefined before it). */
  revision?(server: string): Revision | undefined;
  /** Whether any connected server lists a tool by this name (contracted or not). */
  isListed(name: string): boolean;
  call(tool: CatalogTool, args: Record<string, unknown>, options: CallOptions): Promise<NormalizedResult>;
  /** One `tasks/get` (with `cancel`, `tasks/cancel` first) of a task a call of `server` started (task waits). */
  taskState?(server: string, taskId: string, options: TaskLook): Promise<{ ok: true; task: TaskState } | Failed>;
  /**
   * Reads a resource. ok → `text` is the resource's text contents joined by
   * newlines, `structured` the parsed JSON when the (single) content is JSON.
   * Errors: `unknown_tool` for a server not in the config, `tool_not_permitted`
   * when the server did not advertise the resources capability,
   * `server_unavailable` while it is down, `not_found` for an unknown URI,
   * otherwise as for calls.
   */
  readResource(server: string, uri: string, options: CallOptions): Promise<NormalizedResult>;
  /** Gets a prompt; errors as for `readResource` (capability: prompts). */
  getPrompt(server: string, name: string, args: Record<string, string>, options: CallOptions): Promise<PromptResult>;
  /**
   * The deployment's secret scanner. Every result, resource, prompt and
   * error message is redacted with it before it leaves the host; plan and
   * human_review redact the model's arguments and reviewers' edits with it.
   */
  readonly secrets?: SecretScanner;
  /**
   * Lists one server's tools again now and checks them against the pins (a
   * changed definition is withheld and recorded for review), without waiting
   * for list_changed or a restart: what `npm run tools -- diff` asks for.
   * Throws when the server is unknown or down.
   */
  relist?(server: string): Promise<void>;
  /**
   * Per-user OAuth (`authorization_code` servers): undefined when the owner
   * may call `server` now, else the URL to send them to, its `state` sealed
   * to the thread, the owner and the server.
   */
  beginAuthorization?(server: string, request: AuthorizationRequest): Promise<PendingAuthorization | undefined>;
  /** The callback: checks the state, that `caller` is its owner, and exchanges the code for the owner's tokens. */
  /** `iss`: the response's issuer parameter (RFC 9207), when the redirect carried one. */
  completeAuthorization?(
    state: unknown,
    code: string,
    caller: AuthorizationCaller,
    iss?: string,
  ): Promise<CompletedAuthorization>;
  close(): Promise<void>;
}

export interface AuthorizationCaller {
  user_id: string;
  tenant: string;
}
export interface AuthorizationRequest extends AuthorizationCaller {
  thread_id: string;
}
export interface PendingAuthorization {
  server: string;
  authorization_url: string;
  expires_at: string;
}
export type CompletedAuthorization =
  | { ok: true; binding: AuthorizationBinding }
  | {
      ok: false;
      code: "invalid_state" | "expired_state" | "authorization_forbidden" | "authorization_failed";
      message: string;
    };

export interface ConnectOptions {
  /**
   * Pinned tool definitions. With a store, each contracted tool's definition
   * is pinned on first sight and a tool served with another definition is
   * withheld (`definition_changed`) until an operator approves it. Without
   * one (tests, the conformance client) nothing is pinned.
   */
  pins?: PinStore;
  /** Health changes of servers; by default each one is a line on stderr. */
  onHealth?: (event: HealthEvent) => void;
  /** Jitter source for reconnect delays (tests). */
  random?: () => number;
  /** Values for `${NAME}` placeholders in server environments (host-values.ts); unset ones drop their variable. */
  hostValues?: HostValues;
  /**
   * The per-deployment key of redaction markers (src/secrets/scanner.ts);
   * without one, a random key for this host (markers then differ between
   * processes, still never reveal a value).
   */
  redactionKey?: Uint8Array;
  /** Tokens, credentials and the browser step of OAuth-protected servers (connection-factory.ts). */
  oauth?: OAuthHostOptions;
  /** Where redactions in results are recorded (`secret_redacted` events of the call's run). */
  audit?: AuditStore;
  /** Asks a run's owner what a server elicits (src/elicitation/client.ts); without one the host declares no elicitation. */
  elicitation?: ElicitationBroker;
}

type Failed = { ok: false; code: ToolErrorCode; message: string };

const MAX_URI_CHARS = 2_048;
const MAX_PROMPT_NAME_CHARS = 128;

/**
 * Starts every configured server and lists its tools. A required server that
 * fails to start is a `ConfigError("mcp_start_failed")` naming it; an
 * `optional` one starts unhealthy and is retried in the background.
 */
export async function connectTools(
  configured: WarrantConfig,
  tokens: TokenSettings = ephemeralTokenSettings(),
  options: ConnectOptions = {},
): Promise<ToolHost> {
  const config = withHostValues(configured, options.hostValues ?? {});
  checkCredentials(config.servers, options.oauth?.credentials ?? {});
  const secrets = createSecretScanner({
    key: options.redactionKey ?? new Uint8Array(randomBytes(32)),
    patterns: config.secrets.patterns,
  });
  // This host's log lines are redacted with its own patterns; other hosts in the process keep theirs.
  const log = (line: string): void => void process.stderr.write(logLine(line, secrets));
  const listings = createListings({ config, pins: options.pins, log });
  const servers = createServerSet({
    servers: config.servers,
    connectionFor: connectionFactory(tokens, options.oauth),
    listings,
    onHealth: options.onHealth ?? ((event: HealthEvent) => logHealth(event, log)),
    random: options.random,
    elicitFor: (name, server) => {
      const broker = options.elicitation;
      return broker
        ? elicitationHandler({ server: name, allowed: server.elicitation === true, broker, log })
        : undefined;
    },
  });
  await servers.start();
  const redacted = resultRedactor(secrets, options.audit, log);
  const stateKey = options.oauth?.stateKey ?? new Uint8Array(randomBytes(32));

  const failed = (entry: ServerEntry, failure: Failure): Failed => {
    // The call found the server gone: its tools leave the effective set until it is back.
    if (failure.code === "server_unavailable") entry.supervisor.markDown(failure.message);
    return { ok: false, ...failure };
  };

  /** Sends one request on a caller's session; every failure becomes a typed result, every answer is redacted. */
  const send = async <R>(
    site: Site,
    entry: ServerEntry,
    callOptions: CallOptions,
    work: (
      requests: McpRequests,
      meta: Record<string, string> | undefined,
      requestOptions: { timeout: number; signal?: AbortSignal },
    ) => Promise<unknown>,
    normalize: (raw: unknown) => R,
    classify: (error: unknown) => Failure,
  ): Promise<R | Failed> => {
    if (!entry.supervisor.healthy)
      return {
        ok: false,
        code: "server_unavailable",
        message: `the ${site.server} server is unavailable; it is being reconnected`,
      };
    const requestOptions = {
      timeout: callOptions.timeoutMs,
      ...(callOptions.signal ? { signal: callOptions.signal } : {}),
    };
    let raw: unknown;
    try {
      const record = site.where === "result" ? callOptions.record : undefined;
      const session = await entry.connection.session({
        principal: callOptions.principal,
        threadId: callOptions.threadId,
        ...(record?.attempt === undefined
          ? {}
          : { trace: { runId: record.run_id, callId: record.call_id, attempt: record.attempt } }),
      });
      raw = await session.run((client) => work(client, session.meta, requestOptions));
    } catch (error) {
      if (isTaskWaiting(error)) throw error; // a task left to the poller (tasks.ts) is no failure
      // A protocol error's message may quote what the server was sent or answered.
      const failure = classify(error);
      return failed(entry, { ...failure, message: secrets.text(failure.message, "error").value });
    }
    return normalize(await redacted(raw, site, callOptions));
  };

  /** The entry of a server that offers `capability`, or why not. */
  const serverFor = (
    server: string,
    capability: "resources" | "prompts",
  ): { ok: true; entry: ServerEntry } | Failed => {
    const entry = servers.get(server);
    if (!entry) return { ok: false, code: "unknown_tool", message: "no such server" };
    if (!entry.supervisor.healthy)
      return {
        ok: false,
        code: "server_unavailable",
        message: `the ${server} server is unavailable; it is being reconnected`,
      };
    if (!servers.capabilities(server)?.[capability])
      return { ok: false, code: "tool_not_permitted", message: `the ${server} server offers no ${capability}` };
    return { ok: true, entry };
  };

  return {
    catalog: listings.catalog,
    maxTools: config.selection.max_tools,
    isHealthy: (server) => servers.get(server)?.supervisor.healthy === true,
    revision: (server) => servers.revision(server),
    isListed: listings.isListed,
    async call(tool, args, callOptions) {
      const entry = servers.get(tool.server);
      if (!entry) return { ok: false, code: "unknown_tool", message: "no such server" };
      // Checked at the moment of the call: the definition may have changed since the step was planned.
      if (listings.isWithheld(tool.server, tool.name)) {
        return {
          ok: false,
          code: "tool_not_permitted",
          message: "the tool's definition changed since it was pinned; an operator must review it",
        };
      }
      return send(
        { where: "result", server: tool.server, tool: tool.name, sensitive: tool.contract.sensitive ?? [] },
        entry,
        callOptions,
        (requests, meta, requestOptions) => {
          // A tool call's `_meta` carries its trace context only (the caller's identity reaches tools another way).
          const traceparent = meta?.["traceparent"];
          const params = {
            name: tool.remote_name,
            arguments: args,
            ...(traceparent ? { _meta: { traceparent } } : {}),
          };
          const hooks = tool.contract.task ? callOptions.task : undefined;
          if (hooks?.resume !== undefined && !requests.tasks)
            throw new TaskEnded("outcome_unknown", "the task cannot be polled: the server no longer speaks 2026-07-28");
          const tasks = hooks ? requests.tasks : undefined;
          const callTool = (sent: typeof requestOptions) =>
            tasks && hooks ? callAsTask(tasks, params, sent, hooks) : requests.callTool(params, sent);
          if (!options.elicitation) return callTool(requestOptions);
          const { threadId, principal, record, elicited } = callOptions;
          const call = { server: tool.server, tool: tool.name, threadId, principal, record, elicited };
          return elicitableCall(requests.client, call, requestOptions, callTool);
        },
        (raw) => normalizeResult(raw, tool.contract.output),
        classifyCallFailure,
      );
    },
    async taskState(server, taskId, { cancel, ...callOptions }) {
      const entry = servers.get(server);
      if (!entry) return { ok: false, code: "unknown_tool", message: "no such server" };
      return send(
        { where: "result", server, tool: "tasks/get", sensitive: [] },
        entry,
        callOptions,
        (requests, _meta, requestOptions) => lookAtTask(requests.tasks, taskId, requestOptions, cancel),
        (raw) => ({ ok: true as const, task: raw as TaskState }),
        classifyCallFailure,
      );
    },
    async beginAuthorization(server, request) {
      const connection = servers.get(server)?.connection;
      if (!connection?.authorizationFor) return undefined;
      const expiresAt = Date.now() + AUTHORIZATION_TTL_MS;
      const state = sealState(stateKey, { ...request, server, expires_at: expiresAt });
      const url = await connection.authorizationFor(request.user_id, state);
      return url === undefined
        ? undefined
        : { server, authorization_url: url, expires_at: new Date(expiresAt).toISOString() };
    },
    async completeAuthorization(state, code, caller, iss) {
      const opened = openState(stateKey, state, Date.now());
      if (!opened.ok) return opened;
      const { binding } = opened;
      if (binding.user_id !== caller.user_id || binding.tenant !== caller.tenant)
        return { ok: false, code: "authorization_forbidden", message: "only the owner who was asked may connect" };
      const connection = servers.get(binding.server)?.connection;
      if (!connection?.completeAuthorization)
        return { ok: false, code: "invalid_state", message: "the server no longer asks for authorization" };
      try {
        await connection.completeAuthorization(binding.user_id, code, String(state), iss);
      } catch (error) {
        const reason = secrets.text(error instanceof Error ? error.message : String(error), "error").value;
        log(`warrant: authorization for ${binding.server} failed: ${reason}\n`);
        return {
          ok: false,
          code: "authorization_failed",
          message: isIssuerMismatch(error)
            ? `${error.message}: the code was not used; ask again`
            : "the authorization server refused the code; ask again",
        };
      }
      return { ok: true, binding };
    },
    async readResource(server, uri, callOptions) {
      if (typeof uri !== "string" || uri.length === 0 || uri.length > MAX_URI_CHARS)
        return { ok: false, code: "invalid_arguments", message: "the resource URI is empty or too long" };
      const found = serverFor(server, "resources");
      if (!found.ok) return found;
      return send(
        { where: "resource", server, tool: null, sensitive: [] },
        found.entry,
        callOptions,
        (requests, meta, requestOptions) =>
          requests.readResource({ uri, ...(meta ? { _meta: meta } : {}) }, requestOptions),
        normalizeResource,
        classifyRequestFailure,
      );
    },
    async getPrompt(server, name, args, callOptions) {
      if (typeof name !== "string" || name.length === 0 || name.length > MAX_PROMPT_NAME_CHARS)
        return { ok: false, code: "invalid_arguments", message: "the prompt name is empty or too long" };
      if (Object.values(args).some((value) => typeof value !== "string"))
        return { ok: false, code: "invalid_arguments", message: "prompt arguments must be strings" };
      const found = serverFor(server, "prompts");
      if (!found.ok) return found;
      return send(
        { where: "prompt", server, tool: null, sensitive: [] },
        found.entry,
        callOptions,
        (requests, meta, requestOptions) =>
          requests.getPrompt({ name, arguments: { ...args }, ...(meta ? { _meta: meta } : {}) }, requestOptions),
        normalizePrompt,
        classifyRequestFailure,
      );
    },
    secrets,
    relist: servers.relist,
    close: servers.close,
  };
}
