/**
 * A small stateful Streamable HTTP MCP server that offers no server-initiated
 * event stream and answers the optional GET with 404 (as the MCP conformance
 * suite's test servers do), so the host must tell "no stream" from "session
 * gone". Its one tool answers after a delay, so the GET's 404 arrives while a
 * call is in flight. `forgetSessions()` drops every session, as a restarted
 * server would: then a POST carrying the old session id gets the 404 that
 * does mean the session is gone.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

export interface NoStreamServer {
  url: string;
  /** Tool runs the server started (counted when the handler begins). */
  readonly runs: number;
  /** GET requests answered 404, and POSTs answered 404 for an unknown session. */
  readonly getsRefused: number;
  readonly unknownSessions: number;
  forgetSessions(): void;
  close(): Promise<void>;
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

export async function startNoStreamServer(options: { delayMs: number }): Promise<NoStreamServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let runs = 0;
  let getsRefused = 0;
  let unknownSessions = 0;

  const mcpServer = () => {
    const server = new McpServer({ name: "no-stream-fixture", version: "1.0.0" });
    server.registerTool(
      "slow_add",
      { description: "Adds two numbers, slowly.", inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => {
        runs += 1;
        await new Promise((resolve) => setTimeout(resolve, options.delayMs));
        return { content: [{ type: "text", text: `sum ${a + b}` }], structuredContent: { sum: a + b } };
      },
    );
    return server;
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    if (request.method === "GET") {
      getsRefused += 1;
      return json(response, 404, { error: "not_found" });
    }
    const sessionId = request.headers["mcp-session-id"];
    const body = request.method === "POST" ? await readJson(request) : undefined;
    if (typeof sessionId === "string") {
      const transport = sessions.get(sessionId);
      if (!transport) {
        unknownSessions += 1;
        return json(response, 404, { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null });
      }
      return transport.handleRequest(request, response, body);
    }
    if (request.method !== "POST" || !isInitializeRequest(body)) return json(response, 400, { error: "no session" });
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    await mcpServer().connect(transport);
    return transport.handleRequest(request, response, body);
  };

  const http = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) json(response, 500, { error: "internal" });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;

  const forgetSessions = (): void => {
    const open = [...sessions.values()];
    sessions.clear();
    for (const transport of open) void transport.close();
  };

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get runs() {
      return runs;
    },
    get getsRefused() {
      return getsRefused;
    },
    get unknownSessions() {
      return unknownSessions;
    },
    forgetSessions,
    async close() {
      forgetSessions();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
