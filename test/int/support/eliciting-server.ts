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
 * On 2026-07-28 (`WARRANT_MCP_REVISIONS=2026-07-28`; the default is 2025-11-25 alone) `open_consent_page` answers
 * `input_required` with the URL-mode request under the key `consent` (the revision has no `elicitationId` and no
 * completion notification) and, re-sent with the answer, says `consented: accept` or `not consented: <action>`.
 *
 * Run as `node --import tsx test/int/support/eliciting-server.ts`.
 */
import { randomUUID } from "node:crypto";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ElicitResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { inputRequired, inputResponse } from "@modelcontextprotocol/server";
import { z } from "zod";
import { inputResponsesOf } from "../../../tools/calendar/confirm.js";
import { LEGACY_REVISION, parseRevisions, REVISIONS_ENV, serveBothRevisions } from "../../../tools/shared/revisions.js";
import { CONSENT_PAGES, type ConsentPage } from "./consent-pages.js";

const CONSENT_MESSAGE = "Connect your calendar on our consent page.";
const consentInput = { page: z.enum(Object.keys(CONSENT_PAGES) as [ConsentPage]) };
const consentDescription = "Asks the user to open a page of the server's (URL-mode elicitation).";
const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

function registerLegacy(server: McpServer): void {
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
    { description: consentDescription, inputSchema: consentInput },
    async ({ page }, extra) => {
      const elicitationId = randomUUID();
      const url = CONSENT_PAGES[page].replace("{id}", elicitationId);
      let result: z.infer<typeof ElicitResultSchema>;
      try {
        result = await extra.sendRequest(
          {
            method: "elicitation/create",
            params: { mode: "url", message: CONSENT_MESSAGE, url, elicitationId },
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
}

/** 2026-07-28: the URL-mode question is an `input_required` answer; the re-sent call carries the owner's answer. */
function registerModern(server: McpServer): void {
  server.registerTool(
    "open_consent_page",
    { description: consentDescription, inputSchema: consentInput },
    async ({ page }, extra) => {
      const answered = inputResponse(inputResponsesOf(extra) as Parameters<typeof inputResponse>[0], "consent");
      if (answered.kind === "missing") {
        const url = CONSENT_PAGES[page].replace("{id}", randomUUID());
        const consent = inputRequired.elicitUrl({ message: CONSENT_MESSAGE, url });
        return inputRequired({ inputRequests: { consent } }) as unknown as CallToolResult;
      }
      const action = answered.kind === "elicit" ? answered.action : "unreadable";
      return text(action === "accept" ? "consented: accept" : `not consented: ${action}`);
    },
  );
}

serveBothRevisions(
  { name: "eliciting-test-server", version: "1.0.0" },
  (server, sdk) => (sdk === "v1" ? registerLegacy(server) : registerModern(server)),
  parseRevisions(process.env[REVISIONS_ENV] ?? LEGACY_REVISION),
);
