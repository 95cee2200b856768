/**
 * A stdio MCP server of the tests' own that asks the user during a call
 * (`elicitation/create`, form mode): `book_review_slot(topic)` asks for a
 * date (format `date`, required) and a note (default "none", SEP-1034),
 * then answers with what it got: `booked <topic> on <date> (note: <note>)`,
 * or `not booked: <action>` when the user declined or cancelled. A client
 * that declares no elicitation gets `not booked: no elicitation (<error>)`.
 *
 * `open_consent_page(page)` asks the user to open a URL (URL mode,
 * 2025-11-25): `CONSENT_PAGES[page]`, the good one at CONSENT_HOST or a
 * hostile one; the model never names the URL, so it can be looked for in what
 * the model was sent:
 * on `accept` it says the flow is complete (`notifications/elicitation/complete`)
 * and answers `consented: <action>`; otherwise `not consented: <action>`; a
 * refused request answers `not consented: error (<message>)`.
 *
 * Run as `node --import tsx test/int/support/eliciting-server.ts`.
 */
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { CONSENT_PAGES, type ConsentPage } from "./consent-pages.js";

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

server.registerTool(
  "open_consent_page",
  {
    description: "Asks the user to open a page of the server's (URL-mode elicitation).",
    inputSchema: { page: z.enum(Object.keys(CONSENT_PAGES) as [ConsentPage]) },
  },
  async ({ page }, extra) => {
    const elicitationId = randomUUID();
    const url = CONSENT_PAGES[page].replace("{id}", elicitationId);
    let result: z.infer<typeof ElicitResultSchema>;
    try {
      result = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: { mode: "url", message: "Connect your calendar on our consent page.", url, elicitationId },
        },
        ElicitResultSchema,
        { timeout: 600_000 },
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return { content: [{ type: "text", text: `not consented: error (${reason.slice(0, 300)})` }] };
    }
    if (result.action !== "accept") return { content: [{ type: "text", text: `not consented: ${result.action}` }] };
    // The flow at the page ended: say so, and give the host a moment to show it before the call ends.
    await server.server.createElicitationCompletionNotifier(elicitationId)();
    await new Promise((resolve) => setTimeout(resolve, 500));
    return { content: [{ type: "text", text: "consented: accept" }] };
  },
);

await server.connect(new StdioServerTransport());
