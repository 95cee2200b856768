/**
 * A loopback OAuth authorization server and an OAuth-protected MCP resource
 * server for tests, built from the MCP SDK's server-side auth (its router,
 * bearer middleware and in-memory demo provider, which grants every
 * authorization request at once, as a signed-in user who consents would).
 * The resource server's tools, `whoami` and the write `file_ticket`, record
 * the bearer token of each call, so a test can tell whose token a call carried. With `modern` the resource server
 * answers 2026-07-28 as well (the v2 SDK's handler, 2025-11-25 on its stateless legacy leg), as
 * oauth-client-credentials-servers.ts does; `revisions` records the revision of each tool call.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { DemoInMemoryAuthProvider } from "@modelcontextprotocol/sdk/examples/server/demoInMemoryOAuthProvider.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import {
  createOAuthMetadata,
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
  mcpAuthRouter,
} from "@modelcontextprotocol/sdk/server/auth/router.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpHandler, McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { z } from "zod";
import { authOf, serveModern, type AuthedRequest } from "./web-response.js";

/** express has no types in this tree; the little used here, typed by hand. */
type Handler = (request: unknown, response: unknown, next: () => void) => void;
interface App {
  (request: unknown, response: unknown): void;
  use(handler: Handler | unknown): void;
  post(path: string, ...handlers: unknown[]): void;
}
const express = createRequire(import.meta.url)("express") as (() => App) & { json(): Handler };

export interface OAuthServers {
  mcpUrl: string;
  /** The authorization server's `issuer` (its metadata's): what an RFC 9207 `iss` must say. */
  issuer: string;
  /** Bearer tokens of `whoami` calls, in order. */
  seen: string[];
  /** Access tokens the resource server refuses from now on (revoked at the server). */
  revoked: Set<string>;
  /** `file_ticket` calls: the token each carried and its arguments. */
  filed: { token: string; title: string; idempotency_key: string }[];
  /** The revision each tool call arrived in (`whoami`, `file_ticket`), in order. */
  revisions: string[];
  close(): Promise<void>;
}

async function listen(app: App): Promise<{ server: Server; url: URL }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`) };
}

export async function startOAuthServers(options: { modern?: boolean } = {}): Promise<OAuthServers> {
  const provider = new DemoInMemoryAuthProvider();
  const authApp = express();
  const auth = await listen(authApp);
  authApp.use(mcpAuthRouter({ provider, issuerUrl: auth.url, scopesSupported: ["mcp:tools"] }));
  const metadata = createOAuthMetadata({ provider, issuerUrl: auth.url, scopesSupported: ["mcp:tools"] });

  const seen: string[] = [];
  const revoked = new Set<string>();
  const filed: OAuthServers["filed"] = [];
  const resourceApp = express();
  const resource = await listen(resourceApp);
  const mcpUrl = new URL("/mcp", resource.url);
  resourceApp.use(express.json());
  resourceApp.use(mcpAuthMetadataRouter({ oauthMetadata: metadata, resourceServerUrl: mcpUrl }));
  const bearer = requireBearerAuth({
    verifier: {
      verifyAccessToken: async (token) => {
        if (revoked.has(token)) throw new InvalidTokenError("the token was revoked");
        return provider.verifyAccessToken(token);
      },
    },
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  const revisions: string[] = [];
  /** The revision a call's `_meta` envelope names (2026-07-28 requests carry it), else 2025-11-25. */
  const revisionOf = (extra: unknown) =>
    String(
      (extra as { mcpReq?: { envelope?: Record<string, unknown> } }).mcpReq?.envelope?.[
        "io.modelcontextprotocol/protocolVersion"
      ] ?? "2025-11-25",
    );
  const registerTools = (mcp: McpServer) => {
    mcp.registerTool("whoami", { description: "Says whose token this is." }, async (extra) => {
      seen.push(authOf(extra)?.token ?? "");
      revisions.push(revisionOf(extra));
      return { content: [{ type: "text", text: "ok" }] };
    });
    mcp.registerTool(
      "file_ticket",
      {
        description: "Files a ticket (a write).",
        inputSchema: { title: z.string(), idempotency_key: z.string() },
      },
      async ({ title, idempotency_key }, extra) => {
        filed.push({ token: authOf(extra)?.token ?? "", title, idempotency_key });
        revisions.push(revisionOf(extra));
        return { content: [{ type: "text", text: JSON.stringify({ status: "created", title }) }] };
      },
    );
  };
  const modern = createMcpHandler(
    () => {
      const mcp = new McpServerV2({ name: "tickets", version: "1.0.0" });
      registerTools(mcp as unknown as McpServer);
      return mcp;
    },
    { legacy: "stateless", onerror: () => undefined },
  );
  resourceApp.post("/mcp", bearer, async (request: unknown, response: unknown) => {
    if (options.modern) {
      await serveModern(modern, request as AuthedRequest, response as ServerResponse);
      return;
    }
    const mcp = new McpServer({ name: "tickets", version: "1.0.0" });
    registerTools(mcp);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await mcp.connect(transport);
    const typed = request as Parameters<StreamableHTTPServerTransport["handleRequest"]>[0] & { body: unknown };
    await transport.handleRequest(
      typed,
      response as Parameters<StreamableHTTPServerTransport["handleRequest"]>[1],
      typed.body,
    );
  });

  return {
    mcpUrl: mcpUrl.href,
    issuer: metadata.issuer,
    seen,
    revoked,
    filed,
    revisions,
    async close() {
      await modern.close();
      for (const { server } of [auth, resource]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}

/** The config entry of the test's resource server as a per-user (`authorization_code`) server named `tickets`. */
export function ticketsServer(mcpUrl: string) {
  return {
    transport: "http",
    url: mcpUrl,
    audience: "tickets",
    auth: { type: "oauth", grant: "authorization_code", redirect_uri: "http://127.0.0.1:9/oauth/callback" },
  };
}

/** The contract of its read tool. */
export const WHOAMI_CONTRACT = { server: "tickets", risk: "read", timeout_ms: 10_000 };
