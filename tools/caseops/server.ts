/**
 * `caseops` MCP server over Streamable HTTP: four read-only tools over the
 * shipped claim cases, behind short-lived, audience-bound task tokens.
 *
 * Run: `WARRANT_TASK_TOKEN_SECRET=<hex|base64url> npx tsx tools/caseops/server.ts
 * [--help] [--port N] [--host H] [--audience A] [--data PATH]`.
 * On listen, stdout carries exactly one line, `caseops listening on <url>`, so a
 * parent process can read the URL; every log line goes to stderr.
 *
 * Authentication and tenancy:
 * - Every request to `/mcp` (POST, GET and DELETE alike) must carry
 *   `Authorization: Bearer <task token>` for this server's audience, and the
 *   token is verified on every request, not only when the session starts.
 * - A tool call acts with the claims of the request that carries it (tenant,
 *   subject, task, scopes), so one session can serve a sequence of fresh
 *   short-lived tokens.
 * - A session is bound to the tenant of the token that initialized it. A later
 *   request in that session with a token of another tenant is refused with
 *   403 `tenant_mismatch`: a session id must never become a way to carry state
 *   (or a cached view) across the tenant boundary.
 * - The raw token is not handed to tool handlers (`AuthInfo.token` is empty),
 *   is never logged and is never sent anywhere.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { isInitializeRequest, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import {
  loadTaskTokenSecret,
  MIN_SECRET_BYTES,
  verifyTaskToken,
  type TaskTokenClaims,
  type TaskTokenFailure,
} from "../../src/auth/task-token.js";
import { describeError } from "../../src/errors.js";
import { exitOnShutdown, runEntry } from "../shared/stdio-entry.js";
import {
  AliasResolutionSchema,
  CaseInputSchema,
  CaseSnapshotSchema,
  PolicyRequirementsSchema,
  ResolveAliasInputSchema,
  UnclassifiedDocumentsSchema,
  buildCaseIndex,
  errorText,
  getCaseSnapshot,
  getPolicyRequirements,
  listUnclassifiedDocuments,
  loadCaseData,
  resolveDocumentAlias,
  type Caller,
  type CaseIndex,
  type CaseopsError,
  type Outcome,
} from "./caseops.js";

const SERVER_NAME = "warrant-caseops";
const SERVER_VERSION = "0.1.0";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, "..", "..");
const DEFAULT_DATA_PATH = path.join(HERE, "data", "cases.json");
const DEFAULT_AUDIENCE = "caseops";
const DEFAULT_HOST = "127.0.0.1";
const SECRET_ENV = "WARRANT_TASK_TOKEN_SECRET";

/** Largest accepted request body. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Open sessions beyond this are refused (503) until some close or expire. */
const DEFAULT_MAX_SESSIONS = 256;
/** A session without a request for this long is closed. */
const DEFAULT_SESSION_IDLE_MS = 10 * 60 * 1000;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "::1", "[::1]", "localhost"]);

const USAGE = `Usage: tsx tools/caseops/server.ts [--help] [--port N] [--host H] [--audience A] [--data PATH]

MCP server (Streamable HTTP, POST/GET/DELETE /mcp) over the CaseOps claim cases.
Tools: get_case_snapshot, get_policy_requirements, list_unclassified_documents,
resolve_document_alias. Every request needs "Authorization: Bearer <task token>".

Options:
  --help          Print this message and exit.
  --port N        TCP port (default 0: a free port is chosen).
  --host H        Loopback address to bind (default ${DEFAULT_HOST}; only loopback is allowed).
  --audience A    Task-token audience this server accepts (default ${DEFAULT_AUDIENCE}).
  --data PATH     Case data JSON (default: ${path.relative(REPO_ROOT, DEFAULT_DATA_PATH)}).

Environment:
  ${SECRET_ENV}  Required. HMAC secret for task tokens, hex or base64url, at least ${MIN_SECRET_BYTES} bytes.

On listen, prints one line to stdout: "caseops listening on http://127.0.0.1:<port>/mcp".
`;

/** How to start the server. */
export interface CaseopsServerOptions {
  /** TCP port; 0 picks a free one. */
  readonly port: number;
  /** Loopback address to bind. */
  readonly host: string;
  /** Task-token HMAC secret (at least 32 bytes). */
  readonly secret: Uint8Array;
  /** The `aud` a token must name. */
  readonly audience: string;
  /** Case data file (default: the shipped `data/cases.json`). */
  readonly dataPath?: string;
  /** Cap on concurrently open sessions (default 256). */
  readonly maxSessions?: number;
  /** Idle time after which a session is closed (default 10 minutes). */
  readonly sessionIdleMs?: number;
  /** Where log lines go (default: stderr). */
  readonly log?: (line: string) => void;
}

/** A running server. */
export interface CaseopsServerHandle {
  /** The MCP endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  readonly url: string;
  /** Closes every session and the listener. */
  close(): Promise<void>;
  /** Currently open MCP sessions and HTTP requests received since start. */
  stats(): { sessions: number; requests: number };
}

interface Session {
  readonly server: McpServer;
  readonly transport: StreamableHTTPServerTransport;
  /** The tenant of the token that initialized the session; every later request must match it. */
  readonly tenant: string;
  lastSeen: number;
}

function logToStderr(line: string): void {
  process.stderr.write(`[caseops] ${line}\n`);
}

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** Fails closed if a call somehow arrives without the HTTP layer's verified claims. */
const NO_CALLER: CaseopsError = { code: "access_denied", message: "no authenticated caller" };

const CallerExtraSchema = z.object({ tenant: z.string().min(1), subject: z.string().min(1), task: z.string().min(1) });

/** The caller of this request, as the HTTP layer attached it from the verified token. */
function callerOf(authInfo: AuthInfo | undefined): Caller | undefined {
  if (authInfo === undefined) return undefined;
  const parsed = CallerExtraSchema.safeParse(authInfo.extra);
  return parsed.success ? { ...parsed.data, scopes: authInfo.scopes } : undefined;
}

/** The payload as structured content and as the same JSON text; business errors as `isError` results. */
function toolResult<T extends Record<string, unknown>>(outcome: Outcome<T>): CallToolResult {
  if (!outcome.ok) return { content: [{ type: "text", text: errorText(outcome.error) }], isError: true };
  return { content: [{ type: "text", text: JSON.stringify(outcome.value) }], structuredContent: outcome.value };
}

function withCaller<T extends Record<string, unknown>>(
  authInfo: AuthInfo | undefined,
  run: (caller: Caller) => Outcome<T>,
): CallToolResult {
  const caller = callerOf(authInfo);
  return caller === undefined ? toolResult<T>({ ok: false, error: NO_CALLER }) : toolResult(run(caller));
}

function createMcpServer(index: CaseIndex): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version: SERVER_VERSION });
  server.registerTool(
    "get_case_snapshot",
    {
      title: "Case snapshot",
      description:
        "The structured view of one claim case: claim type, status, pinned rule version " +
        "and the document codes already on file, with an evidence reference to this case version.",
      inputSchema: CaseInputSchema,
      outputSchema: CaseSnapshotSchema,
      annotations: READ_ONLY,
    },
    (args, extra) => withCaller(extra.authInfo, (caller) => getCaseSnapshot(index, caller, args.case_id)),
  );
  server.registerTool(
    "get_policy_requirements",
    {
      title: "Policy requirements",
      description:
        "The document codes required by the rule version pinned to the case, with an evidence reference to that rule version.",
      inputSchema: CaseInputSchema,
      outputSchema: PolicyRequirementsSchema,
      annotations: READ_ONLY,
    },
    (args, extra) => withCaller(extra.authInfo, (caller) => getPolicyRequirements(index, caller, args.case_id)),
  );
  server.registerTool(
    "list_unclassified_documents",
    {
      title: "Unclassified documents",
      description:
        "Source documents of the case that the upstream system has not normalized to a document code (id, title, received_at).",
      inputSchema: CaseInputSchema,
      outputSchema: UnclassifiedDocumentsSchema,
      annotations: READ_ONLY,
    },
    (args, extra) => withCaller(extra.authInfo, (caller) => listUnclassifiedDocuments(index, caller, args.case_id)),
  );
  server.registerTool(
    "resolve_document_alias",
    {
      title: "Resolve document alias",
      description:
        "Maps an unclassified document of the case to a canonical document code " +
        "through the fixed alias table (exact title match). " +
        "normalized_code is null with confidence 0 when the title is not in the table.",
      inputSchema: ResolveAliasInputSchema,
      outputSchema: AliasResolutionSchema,
      annotations: READ_ONLY,
    },
    (args, extra) =>
      withCaller(extra.authInfo, (caller) => resolveDocumentAlias(index, caller, args.case_id, args.document_id)),
  );
  return server;
}

// ---------------------------------------------------------------------------
// HTTP plumbing
// ---------------------------------------------------------------------------

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  response.end(text);
}

function sendJsonRpcError(response: ServerResponse, status: number, code: number, message: string): void {
  sendJson(response, status, { jsonrpc: "2.0", error: { code, message }, id: null });
}

/** Token failures as RFC 6750 answers; the body code is what clients and tests branch on. */
const TOKEN_FAILURE_CODES: Record<TaskTokenFailure, string> = {
  missing: "missing_token",
  malformed: "invalid_token",
  invalid_signature: "invalid_token",
  expired: "token_expired",
  wrong_audience: "wrong_audience",
};

function sendUnauthorized(response: ServerResponse, failure: TaskTokenFailure): void {
  const code = TOKEN_FAILURE_CODES[failure];
  // No token at all gets a bare challenge (RFC 6750 §3.1); anything presented and refused is error="invalid_token".
  const challenge = failure === "missing" ? "Bearer" : `Bearer error="invalid_token", error_description="${code}"`;
  sendJson(response, 401, { error: { code } }, { "www-authenticate": challenge });
}

/** The bearer token of an `Authorization` header, or undefined when there is none (any other scheme counts as none). */
function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  return match?.[1];
}

/** A `Host` or `Origin` host name that names this machine; guards a loopback server against DNS rebinding. */
function isLoopbackAuthority(authority: string | undefined): boolean {
  if (authority === undefined || authority === "") return false;
  try {
    return LOOPBACK_HOSTS.has(new URL(`http://${authority}`).hostname);
  } catch {
    return false;
  }
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_HOSTS.has(url.hostname);
  } catch {
    return false;
  }
}

type BodyRead = { kind: "ok"; text: string } | { kind: "too_large" } | { kind: "aborted" };

/**
 * Reads a request body up to `limit` bytes. Past the limit it stops buffering
 * and drains the rest, so the 413 answer can still be written on the socket.
 */
function readBody(request: IncomingMessage, limit: number): Promise<BodyRead> {
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) {
    request.resume();
    return Promise.resolve({ kind: "too_large" });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        request.off("data", onData);
        request.resume();
        resolve({ kind: "too_large" });
        return;
      }
      chunks.push(chunk);
    };
    request.on("data", onData);
    request.once("end", () => resolve({ kind: "ok", text: Buffer.concat(chunks).toString("utf8") }));
    request.once("error", () => resolve({ kind: "aborted" }));
    request.once("aborted", () => resolve({ kind: "aborted" }));
  });
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? undefined : value;
}

/** What tool handlers see of the token: claims only. The raw token is left out on purpose so no handler can log or forward it. */
function authInfoOf(claims: TaskTokenClaims): AuthInfo {
  return {
    token: "",
    clientId: claims.subject,
    scopes: [...claims.scopes],
    expiresAt: claims.expiresAt,
    extra: { tenant: claims.tenant, subject: claims.subject, task: claims.task },
  };
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

/**
 * Starts the caseops server in this process.
 * @throws Error when the host is not loopback, the secret is short, the data is invalid or the port is taken.
 */
export async function startCaseopsServer(options: CaseopsServerOptions): Promise<CaseopsServerHandle> {
  if (!LOOPBACK_HOSTS.has(options.host)) throw new Error(`host ${options.host} is not a loopback address`);
  if (options.secret.byteLength < MIN_SECRET_BYTES)
    throw new Error(`task token secret must be at least ${MIN_SECRET_BYTES} bytes`);
  const log = options.log ?? logToStderr;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const sessionIdleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const index = buildCaseIndex(await loadCaseData(options.dataPath ?? DEFAULT_DATA_PATH));

  const sessions = new Map<string, Session>();
  let pendingSessions = 0;
  let requests = 0;

  async function openSession(
    request: IncomingMessage & { auth?: AuthInfo },
    response: ServerResponse,
    body: unknown,
    tenant: string,
  ): Promise<void> {
    const server = createMcpServer(index);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sessionId) => {
        sessions.set(sessionId, { server, transport, tenant, lastSeen: Date.now() });
        log(`session opened for tenant ${tenant} (${sessions.size} open)`);
      },
    });
    // Set before connect: the server chains its own close handler onto this one.
    transport.onclose = () => {
      const sessionId = transport.sessionId;
      if (sessionId !== undefined && sessions.delete(sessionId)) log(`session closed (${sessions.size} open)`);
    };
    pendingSessions += 1;
    try {
      await server.connect(transport);
      await transport.handleRequest(request, response, body);
    } finally {
      pendingSessions -= 1;
      // An initialize that failed never registered; do not leave its server behind.
      if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) await server.close();
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    requests += 1;
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname !== "/mcp") return sendJson(response, 404, { error: { code: "not_found" } });
    const method = request.method ?? "";
    if (method !== "POST" && method !== "GET" && method !== "DELETE") {
      return sendJson(response, 405, { error: { code: "method_not_allowed" } }, { allow: "GET, POST, DELETE" });
    }
    if (!isLoopbackAuthority(request.headers.host))
      return sendJson(response, 403, { error: { code: "host_not_allowed" } });
    const origin = singleHeader(request.headers.origin);
    if (origin !== undefined && !isLoopbackOrigin(origin))
      return sendJson(response, 403, { error: { code: "origin_not_allowed" } });

    // Authentication before the body is read: an anonymous client gets nothing buffered on its behalf.
    const verification = await verifyTaskToken(options.secret, bearerToken(request.headers.authorization), {
      audience: options.audience,
    });
    if (!verification.ok) return sendUnauthorized(response, verification.code);
    const claims = verification.claims;

    let body: unknown;
    if (method === "POST") {
      const contentType = request.headers["content-type"] ?? "";
      if (!/^application\/json\s*(;|$)/i.test(contentType)) {
        request.resume();
        return sendJsonRpcError(response, 415, -32000, "Unsupported Media Type: Content-Type must be application/json");
      }
      const read = await readBody(request, MAX_BODY_BYTES);
      if (read.kind === "aborted") return;
      if (read.kind === "too_large")
        return sendJson(response, 413, { error: { code: "payload_too_large" } }, { connection: "close" });
      try {
        body = JSON.parse(read.text);
      } catch {
        return sendJsonRpcError(response, 400, -32700, "Parse error: Invalid JSON");
      }
    }

    const authenticated: IncomingMessage & { auth?: AuthInfo } = request;
    authenticated.auth = authInfoOf(claims);

    const sessionHeader = request.headers["mcp-session-id"];
    if (Array.isArray(sessionHeader))
      return sendJsonRpcError(response, 400, -32000, "Bad Request: Mcp-Session-Id header must be a single value");
    if (sessionHeader !== undefined) {
      const session = sessions.get(sessionHeader);
      if (session === undefined) return sendJsonRpcError(response, 404, -32001, "Session not found");
      if (session.tenant !== claims.tenant) return sendJson(response, 403, { error: { code: "tenant_mismatch" } });
      session.lastSeen = Date.now();
      return session.transport.handleRequest(authenticated, response, body);
    }

    if (method !== "POST" || !isInitializeRequest(body)) {
      return sendJsonRpcError(response, 400, -32000, "Bad Request: No valid session ID provided");
    }
    if (sessions.size + pendingSessions >= maxSessions) {
      return sendJson(response, 503, { error: { code: "too_many_sessions" } }, { "retry-after": "5" });
    }
    return openSession(authenticated, response, body, claims.tenant);
  }

  const httpServer: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      log(`request failed: ${describeError(error)}`);
      if (!response.headersSent) sendJson(response, 500, { error: { code: "internal_error" } });
      else response.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(options.port, options.host, () => {
      httpServer.off("error", reject);
      resolve();
    });
  });
  httpServer.on("error", (error) => log(`server error: ${describeError(error)}`));

  // Idle sessions are closed so a host that forgets DELETE cannot grow the session table without bound.
  const sweeper = setInterval(
    () => {
      const cutoff = Date.now() - sessionIdleMs;
      for (const session of sessions.values()) {
        if (session.lastSeen < cutoff) void session.server.close();
      }
    },
    Math.max(1000, Math.min(sessionIdleMs, 60_000)),
  );
  sweeper.unref();

  const address = httpServer.address() as AddressInfo;
  const hostInUrl = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${hostInUrl}:${address.port}/mcp`;

  let closing: Promise<void> | undefined;
  return {
    url,
    stats: () => ({ sessions: sessions.size, requests }),
    close: () => {
      closing ??= (async () => {
        clearInterval(sweeper);
        await Promise.allSettled([...sessions.values()].map((session) => session.server.close()));
        sessions.clear();
        await new Promise<void>((resolve) => {
          httpServer.close(() => resolve());
          httpServer.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}

// ---------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------

interface CliOptions {
  readonly help: boolean;
  readonly port: number;
  readonly host: string;
  readonly audience: string;
  readonly dataPath: string;
}

function parseCliOptions(argv: readonly string[]): CliOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      help: { type: "boolean", short: "h", default: false },
      port: { type: "string", default: "0" },
      host: { type: "string", default: DEFAULT_HOST },
      audience: { type: "string", default: DEFAULT_AUDIENCE },
      data: { type: "string" },
    },
    strict: true,
    allowPositionals: false,
  });
  const port = Number(values.port);
  if (!/^[0-9]{1,5}$/.test(values.port) || port > 65535)
    throw new Error(`--port must be an integer in 0..65535, got ${values.port}`);
  if (!LOOPBACK_HOSTS.has(values.host))
    throw new Error(`--host must be a loopback address (127.0.0.1, ::1, localhost), got ${values.host}`);
  if (!/^[a-z0-9][a-z0-9_.-]{0,63}$/.test(values.audience))
    throw new Error(`--audience must be a lowercase service name, got ${values.audience}`);
  return {
    help: values.help === true,
    port,
    host: values.host,
    audience: values.audience,
    dataPath: values.data === undefined ? DEFAULT_DATA_PATH : path.resolve(values.data),
  };
}

async function main(argv: readonly string[]): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCliOptions(argv);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }

  let secret: Uint8Array;
  try {
    // This standalone program reads its one setting itself, as tools/notes does; the secret never travels in argv.
    secret = loadTaskTokenSecret(process.env[SECRET_ENV]);
  } catch (error) {
    logToStderr(`cannot start: ${SECRET_ENV}: ${describeError(error)}`);
    return 1;
  }
  let handle: CaseopsServerHandle;
  try {
    handle = await startCaseopsServer({
      port: options.port,
      host: options.host,
      secret,
      audience: options.audience,
      dataPath: options.dataPath,
    });
  } catch (error) {
    logToStderr(`cannot start: ${describeError(error)}`);
    return 1;
  }

  process.stdout.write(`caseops listening on ${handle.url}\n`);
  logToStderr(`ready: audience ${options.audience}`);
  // Launched by a host that gave us a stdin pipe: when the host is gone (even SIGKILLed), so are we.
  exitOnShutdown(() => handle.close(), { stdin: process.env["WARRANT_EXIT_WITH_STDIN"] === "1" });
  return 0;
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  return script !== undefined && import.meta.url === pathToFileURL(path.resolve(script)).href;
}

if (isEntryPoint()) runEntry(main, logToStderr);
