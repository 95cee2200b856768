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
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../auth/principal.js";
import { mintTaskToken } from "../auth/task-token.js";
import { ConfigError, type ToolErrorCode } from "../errors.js";
import type { ServerConfig, WarrantConfig } from "../policy/config.js";
import { buildCatalog, type CatalogTool, type ListedTool } from "./catalog.js";
import type { ConnectionEvents, ServerConnection, ServerInfo } from "./connection.js";
import { definitionOf, type PinStore } from "./pins.js";
import { classifyCallFailure, classifyRequestFailure, type Failure } from "./failures.js";
import { reasonOf, supervise, type HealthEvent, type Supervisor } from "./health.js";
import { httpConnection } from "./http-session.js";
import { normalizeResult, type NormalizedResult } from "./normalize.js";
import { normalizePrompt, normalizeResource, type PromptResult } from "./resources.js";
import { stdioConnection } from "./stdio-session.js";
import { withHostValues, type HostValues } from "./host-values.js";
import { createSecretScanner, type SecretScanner } from "../policy/secrets.js";
import type { RunStart } from "../runtime/audit-chain.js";
import type { AuditStore } from "../runtime/audit.js";
import { logLine } from "../runtime/process-scanner.js";
import { recordRedactions } from "../runtime/redaction.js";
import { elicitableCall, elicitationHandler, type ElicitationBroker } from "./elicitation.js";

export { classifyCallFailure } from "./failures.js";
export type { PromptResult } from "./resources.js";
export type { HealthEvent } from "./health.js";

export interface CallOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Who the call is for: task tokens for HTTP servers are minted from it, stdio servers get it in `_meta`. */
  principal: Principal;
  threadId: string;
  /** The call as the audit names it: a redaction in its result is recorded under this run and call. */
  record?: { call_id: string; run_id: string; run?: RunStart | undefined };
}

/** The tools side of the host: catalog, health, calls, resources and prompts. */
export interface ToolHost {
  /** Contracted tools of the servers as last listed (a server that is down keeps its last listing). */
  catalog(): CatalogTool[];
  /** Above this many eligible tools, only the most relevant are offered. */
  readonly maxTools: number;
  /** Whether a server is currently usable. */
  isHealthy(server: string): boolean;
  /** Whether any connected server lists a tool by this name (contracted or not). */
  isListed(name: string): boolean;
  call(tool: CatalogTool, args: Record<string, unknown>, options: CallOptions): Promise<NormalizedResult>;
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
  close(): Promise<void>;
}

/** Task-token settings: the signing secret shared with HTTP servers we launch. */
export interface TokenSettings {
  secret: Uint8Array;
  ttlSeconds: number;
}

/** Mints a fresh secret when none is configured (it is handed to the servers we launch). */
export function ephemeralTokenSettings(): TokenSettings {
  return { secret: new Uint8Array(randomBytes(32)), ttlSeconds: 120 };
}

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
   * The per-deployment key of redaction markers (src/policy/secrets.ts);
   * without one, a random key for this host (markers then differ between
   * processes, still never reveal a value).
   */
  redactionKey?: Uint8Array;
  /** Where redactions in results are recorded (`secret_redacted` events of the call's run). */
  audit?: AuditStore;
  /** Asks a run's owner what a server elicits (src/mcp/elicitation.ts); without one the host declares no elicitation. */
  elicitation?: ElicitationBroker;
}

/** The default health log: one line per change, never prefixed like a CLI error. */
function logHealth(event: HealthEvent, log: (line: string) => void): void {
  const line =
    event.type === "unhealthy"
      ? `server ${event.server} unavailable: ${event.reason}`
      : event.type === "reconnect_failed"
        ? `server ${event.server} reconnect attempt ${event.attempt} failed: ${event.reason}`
        : event.type === "healthy" && event.attempt > 0
          ? `server ${event.server} reconnected after ${event.attempt} attempt(s)`
          : undefined;
  if (line) log(`[warrant mcp] ${line}\n`);
}

interface ServerEntry {
  connection: ServerConnection;
  supervisor: Supervisor;
}

type Failed = { ok: false; code: ToolErrorCode; message: string };

/** What a request reads from a server, for redaction: where its answer goes and which fields are sensitive. */
interface Site {
  where: "result" | "resource" | "prompt";
  server: string;
  tool: string | null;
  sensitive: readonly string[];
}

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
  const listed = new Map<string, ListedTool[]>();
  let tools: CatalogTool[] = [];
  const entries = new Map<string, ServerEntry>();
  const secretHex = Buffer.from(tokens.secret).toString("hex");
  const secrets = createSecretScanner({
    key: options.redactionKey ?? new Uint8Array(randomBytes(32)),
    patterns: config.secrets.patterns,
  });
  // This host's log lines are redacted with its own patterns; other hosts in the process keep theirs.
  const log = (line: string): void => void process.stderr.write(logLine(line, secrets));
  const onHealth = options.onHealth ?? ((event: HealthEvent) => logHealth(event, log));

  const connectionFor = (server: ServerConfig, events: ConnectionEvents): ServerConnection =>
    server.transport === "stdio"
      ? stdioConnection(server, events)
      : httpConnection({
          server,
          mint: (request) =>
            mintTaskToken(
              tokens.secret,
              {
                audience: server.audience,
                tenant: request.tenant,
                subject: request.subject,
                task: request.task,
                scopes: [...request.scopes],
              },
              { ttlSeconds: tokens.ttlSeconds },
            ),
          launchEnvironment: { WARRANT_TASK_TOKEN_SECRET: secretHex },
          events,
        });

  /** What each server advertised when it last connected. */
  const capabilities = new Map<string, ServerCapabilities>();
  const serverInfo = new Map<string, ServerInfo>();
  /** Per server: its contracted tools whose served definition differs from the pin. */
  const changed = new Map<string, Map<string, { pinned_hash: string; served_hash: string }>>();

  /** Compares a server's contracted tools with their pins (pinning new ones). */
  const checkPins = async (
    server: string,
    serverTools: readonly ListedTool[],
  ): Promise<Map<string, { pinned_hash: string; served_hash: string }>> => {
    const found = new Map<string, { pinned_hash: string; served_hash: string }>();
    if (!options.pins) return found;
    const info = serverInfo.get(server) ?? { name: "", version: "" };
    const definitions = Object.entries(config.tools).flatMap(([tool, contract]) => {
      if (contract.server !== server) return [];
      const served = serverTools.find((candidate) => candidate.name === (contract.remote_name ?? tool));
      return served ? [definitionOf(tool, server, info, served, contract.pin)] : [];
    });
    for (const verdict of await options.pins.check(definitions)) {
      if (verdict.status !== "changed") continue;
      found.set(verdict.tool, { pinned_hash: verdict.pinned_hash, served_hash: verdict.served_hash });
      if (changed.get(server)?.get(verdict.tool)?.served_hash !== verdict.served_hash) {
        log(
          `[warrant mcp] tool ${verdict.tool} of server ${server} withheld: its definition changed (pinned ${verdict.pinned_hash.slice(0, 12)}, served ${verdict.served_hash.slice(0, 12)}); review with \`npm run tools -- diff ${verdict.tool}\`\n`,
        );
      }
    }
    return found;
  };

  /** Takes a server's listing (after a pin check) into the catalog. */
  const adopt = async (server: string, serverTools: ListedTool[]): Promise<void> => {
    const withdrawn = await checkPins(server, serverTools);
    listed.set(server, serverTools);
    changed.set(server, withdrawn);
    // Null prototype: a server named like an Object.prototype member must not find one.
    const byServer: Record<string, ListedTool[]> = Object.assign(
      Object.create(null) as Record<string, ListedTool[]>,
      Object.fromEntries(listed),
    );
    tools = buildCatalog(config.tools, byServer).tools.map((tool) => {
      const difference = changed.get(tool.server)?.get(tool.name);
      return difference ? { ...tool, definition_changed: difference } : tool;
    });
  };

  for (const [name, server] of Object.entries(config.servers)) {
    let supervisor: Supervisor | undefined;
    /** Re-listings after list_changed, one at a time. */
    let relisting: Promise<void> = Promise.resolve();
    const connection = connectionFor(server, {
      down: (reason) => supervisor?.markDown(reason),
      suspect: (reason) => supervisor?.suspect(reason),
      elicit: options.elicitation
        ? elicitationHandler({ server: name, allowed: server.elicitation === true, broker: options.elicitation, log })
        : undefined,
      toolsChanged: () => {
        relisting = relisting
          .then(async () => adopt(name, await connection.relist()))
          // Fail closed: a listing we could not check against the pins takes the server down until it reconnects.
          .catch((error: unknown) => supervisor?.markDown(`re-listing tools failed: ${reasonOf(error)}`));
      },
    });
    supervisor = supervise({
      server: name,
      policy: server.reconnect,
      connect: async () => {
        const opened = await connection.open();
        capabilities.set(name, opened.capabilities);
        serverInfo.set(name, opened.info);
        await adopt(name, opened.tools);
      },
      probe: () => connection.probe(),
      onEvent: onHealth,
      ...(options.random ? { random: options.random } : {}),
    });
    entries.set(name, { connection, supervisor });
  }

  let closing: Promise<void> | undefined;
  const closeAll = (): Promise<void> => {
    closing ??= Promise.all(
      [...entries.values()].map(async (entry) => {
        // Shut down first so a reconnect in flight fails fast, wait for it, then once more for anything it opened.
        const stopping = entry.supervisor.close();
        await entry.connection.shutdown().catch(() => undefined);
        await stopping;
        await entry.connection.shutdown().catch(() => undefined);
      }),
    ).then(() => undefined);
    return closing;
  };

  const names = [...entries.keys()];
  const started = await Promise.allSettled(names.map((name) => entries.get(name)?.supervisor.start()));
  const failures: string[] = [];
  started.forEach((outcome, index) => {
    const name = names[index] ?? "";
    if (outcome.status === "fulfilled") return;
    if (config.servers[name]?.optional)
      entries.get(name)?.supervisor.markDown(`start-up failed: ${reasonOf(outcome.reason)}`);
    else failures.push(`${name}: ${reasonOf(outcome.reason)}`);
  });
  if (failures.length > 0) {
    await closeAll();
    throw new ConfigError("mcp_start_failed", `an MCP server failed to start: ${failures.join("; ")}`);
  }

  const failed = (entry: ServerEntry, failure: Failure): Failed => {
    // The call found the server gone: its tools leave the effective set until it is back.
    if (failure.code === "server_unavailable") entry.supervisor.markDown(failure.message);
    return { ok: false, ...failure };
  };

  /**
   * Redacts secrets in what a server sent (`site.where`: result, resource,
   * prompt) before anything else reads it, and records where: a
   * `secret_redacted` audit event of the call's run, or without one a log line.
   * The audit write never costs the result (an effect may already have happened).
   */
  const redacted = async (raw: unknown, site: Site, callOptions: CallOptions): Promise<unknown> => {
    const { value, found } = secrets.value(raw, site.where, site.sensitive);
    if (found.length === 0) return raw;
    const record = callOptions.record;
    const where = `${site.where} of ${site.tool ?? site.server}`;
    if (!options.audit || !record) {
      log(`[warrant secrets] redacted ${found.length} value(s) in a ${where} (no run to audit)\n`);
      return value;
    }
    await recordRedactions(
      options.audit,
      [
        {
          where: site.where,
          subject: `${site.where}:${record.call_id}:${site.tool ?? site.server}`,
          tool: site.tool,
          found,
        },
      ],
      {
        thread_id: callOptions.threadId,
        run_id: record.run_id,
        run: record.run,
        actor: callOptions.principal.user_id,
        node: "execute",
        at: new Date().toISOString(),
      },
    ).catch((error: unknown) =>
      log(`[warrant secrets] could not record the redaction in a ${where}: ${reasonOf(error)}\n`),
    );
    return value;
  };

  /** Sends one request on a caller's session; every failure becomes a typed result, every answer is redacted. */
  const send = async <R>(
    site: Site,
    entry: ServerEntry,
    callOptions: CallOptions,
    work: (
      client: Client,
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
      const session = await entry.connection.session({
        principal: callOptions.principal,
        threadId: callOptions.threadId,
      });
      raw = await session.run((client) => work(client, session.meta, requestOptions));
    } catch (error) {
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
    const entry = entries.get(server);
    if (!entry) return { ok: false, code: "unknown_tool", message: "no such server" };
    if (!entry.supervisor.healthy)
      return {
        ok: false,
        code: "server_unavailable",
        message: `the ${server} server is unavailable; it is being reconnected`,
      };
    if (!capabilities.get(server)?.[capability])
      return { ok: false, code: "tool_not_permitted", message: `the ${server} server offers no ${capability}` };
    return { ok: true, entry };
  };

  return {
    catalog: () => tools,
    maxTools: config.selection.max_tools,
    isHealthy: (server) => entries.get(server)?.supervisor.healthy === true,
    isListed: (name) =>
      [...listed.values()].some((serverTools) => serverTools.some((tool) => tool.name === name)) ||
      tools.some((tool) => tool.name === name),
    async call(tool, args, callOptions) {
      const entry = entries.get(tool.server);
      if (!entry) return { ok: false, code: "unknown_tool", message: "no such server" };
      // Checked at the moment of the call: the definition may have changed since the step was planned.
      if (changed.get(tool.server)?.has(tool.name)) {
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
        (client, _meta, requestOptions) => {
          const callTool = (sent: typeof requestOptions) =>
            client.callTool({ name: tool.remote_name, arguments: args }, undefined, sent);
          if (!options.elicitation) return callTool(requestOptions);
          const { threadId, principal, record } = callOptions;
          const call = { server: tool.server, tool: tool.name, threadId, principal, record };
          return elicitableCall(client, call, requestOptions, callTool);
        },
        (raw) => normalizeResult(raw, tool.contract.output),
        classifyCallFailure,
      );
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
        (client, meta, requestOptions) =>
          client.readResource({ uri, ...(meta ? { _meta: meta } : {}) }, requestOptions),
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
        (client, meta, requestOptions) =>
          client.getPrompt({ name, arguments: { ...args }, ...(meta ? { _meta: meta } : {}) }, requestOptions),
        normalizePrompt,
        classifyRequestFailure,
      );
    },
    secrets,
    async relist(server) {
      const entry = entries.get(server);
      if (!entry?.supervisor.healthy) throw new Error(`the ${server} server is not connected`);
      await adopt(server, await entry.connection.relist());
    },
    close: closeAll,
  };
}
