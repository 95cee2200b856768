/**
 * A Streamable HTTP MCP server behind Warrant's task tokens that speaks
 * 2026-07-28 (the v2 SDK's `createMcpHandler`, stateless, one instance per
 * request) and 2025-11-25 (the same handler's stateless legacy leg), or only
 * one of them (`WARRANT_MCP_REVISIONS`, as the shipped stdio servers): a
 * 2025-11-25-only server is the v1 SDK's own stateless transport, which
 * knows no `server/discover`.
 *
 * Every request needs `Authorization: Bearer <task token>` for audience
 * `revisions` (401 otherwise). Tools: `whoami` (read: the claims of the
 * request's token, the `traceparent` in the call's `_meta` and the SDK era
 * that served it) and `add_entry` (write: appends one JSON line with the
 * caller to `WARRANT_HTTP_ENTRIES`), `entry_status` (whether an idempotency key was
 * applied), `pid` (its process id, for a test that kills
 * it) and `refuse` (a tool error naming `access_denied`). A token whose subject
 * is `WARRANT_HTTP_REFUSE_SUBJECT` is refused with 403. On 2026-07-28 only, `consent_page(url)` answers
 * `input_required` with a URL-mode request for `url` (key `consent`) and, re-sent with the answer, says
 * `{ consent: <action> }`. Prints
 * `revisions listening on <url>`, after appending its pid to `WARRANT_HTTP_STARTS`.
 * Run as `node --import tsx test/int/support/http-revisions-server.ts`.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer as McpServerV1 } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { createMcpHandler, inputRequired, inputResponse, McpServer } from "@modelcontextprotocol/server";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { loadTaskTokenSecret, verifyTaskToken } from "../../../src/auth/task-token.js";
import { inputResponsesOf } from "../../../tools/calendar/confirm.js";
import { sendWebResponse } from "./web-response.js";
import { exitOnShutdown } from "../../../tools/shared/stdio-entry.js";
import { MODERN_REVISION, parseRevisions, REVISIONS_ENV, requestMeta } from "../../../tools/shared/revisions.js";

export const REVISIONS_AUDIENCE = "revisions";
const INFO = { name: "warrant-http-revisions", version: "0.1.0" };
const secret = loadTaskTokenSecret(process.env["WARRANT_TASK_TOKEN_SECRET"]);
const entriesPath = process.env["WARRANT_HTTP_ENTRIES"] ?? "";
const revisions = parseRevisions(process.env[REVISIONS_ENV]);
const refusedSubject = process.env["WARRANT_HTTP_REFUSE_SUBJECT"];

type Era = "modern" | "legacy" | "v1";

function readEntries(): Record<string, unknown>[] {
  if (!existsSync(entriesPath)) return [];
  const lines = readFileSync(entriesPath, "utf8")
    .split("\n")
    .filter((line) => line !== "");
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

function callerOf(extra: unknown): Record<string, unknown> {
  const context = extra as { http?: { authInfo?: AuthInfo }; authInfo?: AuthInfo };
  const extraClaims = (context.http?.authInfo ?? context.authInfo)?.extra ?? {};
  return { tenant: extraClaims["tenant"], subject: extraClaims["subject"], task: extraClaims["task"] };
}

function text(value: unknown) {
  return { content: [{ type: "text" as const, text: JSON.stringify(value) }] };
}

/** The tools, on a server of either SDK (the handlers read only what both pass). */
function register(server: McpServerV1, era: Era): void {
  server.registerTool(
    "whoami",
    { description: "The caller of this request, the call's traceparent and the era that served it." },
    async (extra) => {
      const meta = requestMeta(extra) as Record<string, unknown> | undefined;
      return text({ ...callerOf(extra), traceparent: meta?.["traceparent"] ?? null, era });
    },
  );
  server.registerTool(
    "add_entry",
    {
      description: "Appends one entry.",
      inputSchema: { text: z.string().max(200), idempotency_key: z.string().max(200).optional() },
    },
    async ({ text: entry, idempotency_key }, extra) => {
      const key = idempotency_key === undefined ? {} : { idempotency_key };
      appendFileSync(entriesPath, `${JSON.stringify({ text: entry, era, ...callerOf(extra), ...key })}\n`);
      return text({ added: entry });
    },
  );
  server.registerTool(
    "entry_status",
    {
      description: "Whether an entry with this idempotency key was added.",
      inputSchema: z.object({ idempotency_key: z.string().max(200) }),
      outputSchema: z.object({ applied: z.boolean() }),
    },
    async ({ idempotency_key }) => {
      const applied = readEntries().some((entry) => entry["idempotency_key"] === idempotency_key);
      return { ...text({ applied }), structuredContent: { applied } };
    },
  );
  server.registerTool("pid", { description: "This server's process id." }, async () => text({ pid: process.pid }));
  server.registerTool("refuse", { description: "Always refuses." }, async () => {
    throw new McpError(-32003, "refused", { code: "access_denied" });
  });
  if (era === "modern") registerConsent(server);
}

/** URL-mode elicitation the 2026-07-28 way: an `input_required` answer, then the re-sent call with the answer. */
function registerConsent(server: McpServerV1): void {
  server.registerTool(
    "consent_page",
    { description: "Asks the user to open a page (URL mode).", inputSchema: { url: z.string().max(20_000) } },
    async ({ url }, extra) => {
      const answered = inputResponse(inputResponsesOf(extra) as Parameters<typeof inputResponse>[0], "consent");
      if (answered.kind === "missing") {
        const consent = inputRequired.elicitUrl({ message: "Open our consent page.", url });
        return inputRequired({ inputRequests: { consent } }) as unknown as ReturnType<typeof text>;
      }
      return text({ consent: answered.kind === "elicit" ? answered.action : "unreadable" });
    },
  );
}

const modern = createMcpHandler(
  (context) => {
    const server = new McpServer(INFO);
    register(server as unknown as McpServerV1, context.era);
    return server;
  },
  { legacy: revisions.size === 2 ? "stateless" : "reject", onerror: () => undefined },
);

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function serveModern(request: IncomingMessage, response: ServerResponse, body: Buffer, auth: AuthInfo) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") headers.set(name, value);
  const method = request.method ?? "GET";
  const answer = await modern.fetch(
    new Request(`http://127.0.0.1${request.url ?? "/"}`, {
      method,
      headers,
      ...(method === "POST" ? { body: new Uint8Array(body) } : {}),
    }),
    { authInfo: auth },
  );
  await sendWebResponse(response, answer);
}

/** The v1 SDK's stateless Streamable HTTP: one server and transport per request. */
async function serveV1(request: IncomingMessage, response: ServerResponse, body: Buffer, auth: AuthInfo) {
  const server = new McpServerV1(INFO);
  register(server, "v1");
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  response.on("close", () => void server.close());
  (request as IncomingMessage & { auth?: AuthInfo }).auth = auth;
  await transport.handleRequest(request, response, body.length > 0 ? JSON.parse(body.toString("utf8")) : undefined);
}

const http = createServer((request, response) => {
  void (async () => {
    const body = await bodyOf(request);
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
    const verified = await verifyTaskToken(secret, token, { audience: REVISIONS_AUDIENCE });
    if (verified.ok && verified.claims.subject === refusedSubject) {
      response.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ error: "forbidden" }));
      return;
    }
    if (!verified.ok) {
      response.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: verified.code }));
      return;
    }
    const { claims } = verified;
    const auth: AuthInfo = { token: "", clientId: claims.subject, scopes: [...claims.scopes], extra: { ...claims } };
    if (revisions.has(MODERN_REVISION)) await serveModern(request, response, body, auth);
    else await serveV1(request, response, body, auth);
  })().catch((error: unknown) => {
    process.stderr.write(`[revisions] ${String(error)}\n`);
    if (!response.headersSent) response.writeHead(500);
    response.end();
  });
});

http.listen(0, "127.0.0.1", () => {
  const { port } = http.address() as AddressInfo;
  if (process.env["WARRANT_HTTP_STARTS"]) appendFileSync(process.env["WARRANT_HTTP_STARTS"], `${process.pid}\n`);
  process.stdout.write(`revisions listening on http://127.0.0.1:${port}/mcp\n`);
});
exitOnShutdown(
  async () => {
    await modern.close();
    http.close();
  },
  { stdin: process.env["WARRANT_EXIT_WITH_STDIN"] === "1" },
);
