/**
 * A tiny stdio MCP server for the ToolHost's resource and prompt API: no
 * tools but `echo_meta` (what a call's `_meta` carried), resources and one
 * prompt that echo the identity the host sent in the request's `_meta`, plus
 * a resource that refuses with a typed code.
 * Run by the tests as `node --import tsx test/int/support/meta-server.ts`.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { closeOnShutdown } from "../../../tools/shared/stdio-entry.js";

type Meta = Record<string, unknown> | undefined;

function identity(meta: Meta): { user_id: unknown; tenant: unknown } {
  return { user_id: meta?.["warrant/user_id"] ?? null, tenant: meta?.["warrant/tenant"] ?? null };
}

const server = new McpServer({ name: "warrant-meta-fixture", version: "0.0.0" });

server.registerResource("whoami", "meta://whoami", { mimeType: "application/json" }, async (uri, extra) => ({
  contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(identity(extra._meta)) }],
}));

server.registerResource("two-parts", "meta://two-parts", { mimeType: "text/plain" }, async (uri) => ({
  contents: [
    { uri: uri.href, mimeType: "text/plain", text: "part one" },
    { uri: uri.href, mimeType: "text/plain", text: "part two" },
  ],
}));

server.registerResource("denied", "meta://denied", {}, async () => {
  // Uniform refusal: the data names our code, the message carries nothing to leak.
  throw new McpError(-32003, "refused", { code: "access_denied" });
});

server.registerPrompt(
  "greet",
  { description: "Greets someone on behalf of the caller.", argsSchema: { name: z.string() } },
  async ({ name }, extra) => ({
    messages: [
      {
        role: "user",
        content: { type: "text", text: `Say hello to ${name} for ${String(identity(extra._meta).user_id)}.` },
      },
      { role: "assistant", content: { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" } },
    ],
  }),
);

// A tool that says what the call's `_meta` carried: its trace context, and whether any identity came with it.
server.registerTool("echo_meta", { description: "Echoes the call's _meta." }, async (extra) => ({
  content: [
    {
      type: "text",
      text: JSON.stringify({ traceparent: extra._meta?.["traceparent"] ?? null, ...identity(extra._meta) }),
    },
  ],
}));

await server.connect(new StdioServerTransport());
closeOnShutdown(server);
