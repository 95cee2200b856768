/**
 * Clients of `/mcp` and `/a2a/{assistant_id}` for integration tests: the
 * MCP SDK's client over Streamable HTTP and `@a2a-js/sdk`'s client, each
 * authenticated as one user of a test server.
 */
import { randomUUID } from "node:crypto";
import { type Message, type Part, Role, type SendMessageRequest } from "@a2a-js/sdk";
import {
  type Client as A2AClient,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { TestServer } from "./server.js";

/** An MCP client connected to the server's `/mcp` as `user`. */
export async function mcpClientAs(server: TestServer, user: string): Promise<McpClient> {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${await server.token(user)}` } },
  });
  const client = new McpClient({ name: `test-${user}`, version: "0.0.0" });
  await client.connect(transport);
  return client;
}

/** An A2A client for the assistant's agent card, sending `user`'s token. */
export async function a2aClientAs(server: TestServer, user: string, assistantId = "agent"): Promise<A2AClient> {
  const token = await server.token(user);
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("Authorization", `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(server.url, `/.well-known/agent-card.json?assistant_id=${assistantId}`);
}

const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});

/** A user message as the A2A client sends it. */
export function userMessage(
  text: string,
  options: { contextId?: string; taskId?: string; metadata?: Record<string, unknown> } = {},
): SendMessageRequest {
  const message: Message = {
    messageId: randomUUID(),
    contextId: options.contextId ?? "",
    taskId: options.taskId ?? "",
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: options.metadata,
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: "", message, configuration: undefined, metadata: options.metadata };
}
