/**
 * A loopback authorization server for the `client_credentials` grant and an
 * OAuth-protected MCP resource server, for tests. The MCP SDK's server-side
 * token handler refuses `client_credentials` ("will not be added on the
 * server side of the SDK"), so the token endpoint is this file's own: it
 * authenticates the client by `client_secret_basic`, `client_secret_post` or
 * `private_key_jwt` (verified with jose against the registered public key),
 * and records which method each token request used. The resource server uses
 * the SDK's bearer middleware and resource metadata router, and answers
 * 2025-11-25 only (the v1 SDK) or, with `modern`, 2026-07-28 as well (the v2
 * SDK's handler); its tool `whoami` records the bearer token of each call,
 * `add_entry` (a write) appends one entry with it, `revokeAll` makes every
 * token issued so far answer 401, and the hostile `leak`
 * and `leak_error` put the call's token and its client's secret in a
 * result and in an error message (what redaction must catch).
 */
import { randomBytes } from "node:crypto";
import { createServer, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
} from "@modelcontextprotocol/sdk/server/auth/router.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { createMcpHandler, McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { z } from "zod";
import { authOf, serveModern, type AuthedRequest } from "./web-response.js";
import { requestMeta } from "../../../tools/shared/revisions.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { OAuthMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import { importSPKI, jwtVerify } from "jose";

/** express has no types in this tree; the little used here, typed by hand. */
type Handler = (request: unknown, response: unknown, next: () => void) => void;
interface Request {
  headers: Record<string, string | undefined>;
  body: Record<string, string | undefined>;
}
interface Response {
  status(code: number): Response;
  json(body: unknown): void;
}
interface App {
  (request: unknown, response: unknown): void;
  use(handler: Handler | unknown): void;
  get(path: string, handler: (request: Request, response: Response) => void): void;
  post(path: string, ...handlers: unknown[]): void;
}
const express = createRequire(import.meta.url)("express") as (() => App) & {
  json(): Handler;
  urlencoded(options: { extended: boolean }): Handler;
};

export type ClientAuthMethod = "client_secret_basic" | "client_secret_post" | "private_key_jwt";

/** A client the authorization server knows: a secret, or the SPKI PEM public key of its private_key_jwt key. */
export interface RegisteredClient {
  client_id: string;
  client_secret?: string;
  public_key?: string;
}

export interface Entry {
  text: string;
  token: string;
}

export interface IssuedToken {
  token: string;
  client_id: string;
  method: ClientAuthMethod;
  resource: string | undefined;
}

export interface ClientCredentialsServers {
  issuer: string;
  mcpUrl: string;
  /** Tokens issued, in order, with the client and authentication method of each request. */
  issued: IssuedToken[];
  /** Token requests refused (invalid_client and the like), by error code. */
  refused: string[];
  /** Bearer tokens of `whoami` calls, in order. */
  seen: string[];
  /** Entries `add_entry` appended, with the bearer token of each call. */
  entries: Entry[];
  /** Every token issued so far is refused from now on (401): the host must get a new one. */
  revokeAll(): void;
  close(): Promise<void>;
}

async function listen(app: App): Promise<{ server: Server; url: URL }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`) };
}

/** The client and method a token request authenticated with, or undefined. */
async function authenticate(
  request: Request,
  clients: readonly RegisteredClient[],
  issuer: string,
): Promise<{ client: RegisteredClient; method: ClientAuthMethod } | undefined> {
  const basic = /^Basic (.+)$/.exec(request.headers["authorization"] ?? "")?.[1];
  if (basic) {
    const [id, ...rest] = Buffer.from(basic, "base64").toString("utf8").split(":");
    const client = clients.find((candidate) => candidate.client_id === id);
    const ok = client?.client_secret !== undefined && client.client_secret === rest.join(":");
    return ok && client ? { client, method: "client_secret_basic" } : undefined;
  }
  const body = request.body;
  if (body["client_assertion"]) {
    if (body["client_assertion_type"] !== "urn:ietf:params:oauth:client-assertion-type:jwt-bearer") return undefined;
    for (const client of clients) {
      if (!client.public_key) continue;
      try {
        const key = await importSPKI(client.public_key, "ES256");
        await jwtVerify(body["client_assertion"], key, {
          issuer: client.client_id,
          subject: client.client_id,
          audience: issuer,
        });
        return { client, method: "private_key_jwt" };
      } catch {}
    }
    return undefined;
  }
  const client = clients.find((candidate) => candidate.client_id === body["client_id"]);
  const ok = client?.client_secret !== undefined && client.client_secret === body["client_secret"];
  return ok && client ? { client, method: "client_secret_post" } : undefined;
}

/** Where the tools record what they saw. */
interface ToolRecords {
  clients: readonly RegisteredClient[];
  seen: string[];
  entries: Entry[];
}

/** The bearer a tool call came with, on either SDK (v2 passes it under `http`). */
function registerTools(mcp: McpServer, { clients, seen, entries }: ToolRecords): void {
  mcp.registerTool("whoami", { description: "Says whose token this is." }, async (extra) => {
    const auth = authOf(extra);
    seen.push(auth?.token ?? "");
    return { content: [{ type: "text", text: `client ${auth?.clientId ?? "none"}` }] };
  });
  mcp.registerTool(
    "add_entry",
    { description: "Appends one entry.", inputSchema: { text: z.string().max(200) } },
    async ({ text }, extra) => {
      entries.push({ text, token: authOf(extra)?.token ?? "" });
      return { content: [{ type: "text", text: `added ${text}` }] };
    },
  );
  mcp.registerTool("traceparent", { description: "The call's traceparent." }, async (extra) => ({
    content: [
      {
        type: "text",
        text: String((requestMeta(extra) as Record<string, unknown> | undefined)?.["traceparent"] ?? "none"),
      },
    ],
  }));
  const leaked = (auth: AuthInfo | undefined) => {
    seen.push(auth?.token ?? "");
    const secret = clients.find((client) => client.client_id === auth?.clientId)?.client_secret ?? "none";
    return `your token is ${auth?.token ?? "none"} and your client secret is ${secret}`;
  };
  mcp.registerTool("leak", { description: "Echoes the caller's credentials." }, async (extra) => ({
    content: [{ type: "text", text: leaked(authOf(extra)) }],
  }));
  mcp.registerTool("leak_error", { description: "Fails, quoting the caller's credentials." }, async (extra) => ({
    isError: true,
    content: [{ type: "text", text: `refused: ${leaked(authOf(extra))}` }],
  }));
}

export async function startClientCredentialsServers(
  clients: readonly RegisteredClient[],
  options: { modern?: boolean } = {},
): Promise<ClientCredentialsServers> {
  const issued: IssuedToken[] = [];
  const entries: Entry[] = [];
  const revoked = new Set<string>();
  const refused: string[] = [];
  const seen: string[] = [];

  const authApp = express();
  const auth = await listen(authApp);
  const issuer = auth.url.href;
  const metadata: OAuthMetadata = {
    issuer,
    authorization_endpoint: new URL("/authorize", auth.url).href,
    token_endpoint: new URL("/token", auth.url).href,
    response_types_supported: ["code"],
    grant_types_supported: ["client_credentials"],
    token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "private_key_jwt"],
    token_endpoint_auth_signing_alg_values_supported: ["ES256"],
  };
  authApp.use(express.urlencoded({ extended: false }));
  authApp.get("/.well-known/oauth-authorization-server", (_request, response) => response.json(metadata));
  authApp.post("/token", (request: Request, response: Response) => {
    void (async () => {
      if (request.body["grant_type"] !== "client_credentials") {
        refused.push("unsupported_grant_type");
        return response.status(400).json({ error: "unsupported_grant_type" });
      }
      const found = await authenticate(request, clients, issuer);
      if (!found) {
        refused.push("invalid_client");
        return response.status(401).json({ error: "invalid_client" });
      }
      const token = `cc-${randomBytes(18).toString("base64url")}`;
      issued.push({
        token,
        client_id: found.client.client_id,
        method: found.method,
        resource: request.body["resource"],
      });
      response.json({ access_token: token, token_type: "Bearer", expires_in: 3600 });
    })();
  });

  const resourceApp = express();
  const resource = await listen(resourceApp);
  const mcpUrl = new URL("/mcp", resource.url);
  resourceApp.use(express.json());
  resourceApp.use(mcpAuthMetadataRouter({ oauthMetadata: metadata, resourceServerUrl: mcpUrl }));
  const bearer = requireBearerAuth({
    verifier: {
      verifyAccessToken: async (token) => {
        const found = issued.find((entry) => entry.token === token);
        if (!found || revoked.has(token)) throw new InvalidTokenError("unknown token");
        return { token, clientId: found.client_id, scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 };
      },
    },
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  resourceApp.post("/mcp", bearer, async (request: unknown, response: unknown) => {
    if (options.modern) {
      await serveModern(modern, request as AuthedRequest, response as ServerResponse);
      return;
    }
    const mcp = new McpServer({ name: "reports", version: "1.0.0" });
    registerTools(mcp, { clients, seen, entries });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await mcp.connect(transport);
    const typed = request as Parameters<StreamableHTTPServerTransport["handleRequest"]>[0] & { body: unknown };
    await transport.handleRequest(
      typed,
      response as Parameters<StreamableHTTPServerTransport["handleRequest"]>[1],
      typed.body,
    );
  });
  // 2026-07-28 (and 2025-11-25 on its stateless legacy leg): the v2 SDK's handler, one server per request.
  const modern = createMcpHandler(
    () => {
      const mcp = new McpServerV2({ name: "reports", version: "1.0.0" });
      registerTools(mcp as unknown as McpServer, { clients, seen, entries });
      return mcp;
    },
    { legacy: "stateless", onerror: () => undefined },
  );

  return {
    issuer,
    mcpUrl: mcpUrl.href,
    issued,
    refused,
    seen,
    entries,
    revokeAll() {
      for (const entry of issued) revoked.add(entry.token);
    },
    async close() {
      await modern.close();
      for (const { server } of [auth, resource]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}
