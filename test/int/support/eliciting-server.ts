/**
 * A stdio MCP server of the tests' own that asks the user during a call
 * (`elicitation/create`, form mode): `book_review_slot(topic)` asks for a
 * date (format `date`, required) and a note (default "none", SEP-1034),
 * then answers with what it got: `booked <topic> on <date> (note: <note>)`,
 * or `not booked: <action>` when the user declined or cancelled. A client
 * that declares no elicitation gets `not booked: no elicitation (<error>)`.
 *
 * Run as `node --import tsx test/int/support/eliciting-server.ts`.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const server = new McpServer({ name: "eliciting-test-server", version: "1.0.0" });

server.registerTool(
  "book_review_slot",
  {
    description: "Books a review slot on a date the user picks.",
    inputSchema: { topic: z.string().max(200) },
  },
  async ({ topic }, extra) => {
    let result: z.infer<typeof ElicitResultSchema>;
    try {
      result = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: {
            message: `Which day should the review of ${topic} be on?`,
            requestedSchema: {
              type: "object",
              properties: {
                date: { type: "string", format: "date", title: "Date" },
                note: { type: "string", title: "Note", maxLength: 100, default: "none" },
              },
              required: ["date"],
            },
          },
        },
        ElicitResultSchema,
        { timeout: 600_000 },
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { content: [{ type: "text", text: `not booked: no elicitation (${reason.slice(0, 200)})` }] };
    }
    if (result.action !== "accept") return { content: [{ type: "text", text: `not booked: ${result.action}` }] };
    const { date, note } = result.content ?? {};
    return { content: [{ type: "text", text: `booked ${topic} on ${String(date)} (note: ${String(note)})` }] };
  },
);

await server.connect(new StdioServerTransport());
