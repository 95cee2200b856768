/**
 * Shared parts of the elicitation tests: a config whose only server is the
 * tests' eliciting stdio server (test/int/support/eliciting-server.ts, with
 * `elicitation: true`, on either revision) and a contract for its tool, written to a temp file
 * for a server process (`WARRANT_CONFIG`); the scripted model turns that
 * propose the call and then answer.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { ElicitationAnswer, ElicitationBroker, ElicitationQuestion } from "../../../src/elicitation/client.js";
import type { ConsentPage } from "./consent-pages.js";
import type { ScriptedCompletion } from "./fake-openai.js";

const USAGE = { prompt_tokens: 50, completion_tokens: 20 };

/**
 * Writes the config into `directory`; returns its path. `modern`: the server speaks 2026-07-28 only and the host is
 * pinned to it, and only `open_consent_page` is contracted (else the server speaks 2025-11-25 alone).
 */
export async function writeElicitingConfig(
  directory: string,
  timeoutMs: number,
  name = "eliciting",
  modern = false,
): Promise<string> {
  const file = path.join(directory, `${name}.config.json`);
  const revision = modern ? { protocol: "2026-07-28", env: { WARRANT_MCP_REVISIONS: "2026-07-28" } } : {};
  const config = {
    servers: {
      booking: {
        transport: "stdio",
        command: "node",
        args: ["--import", "tsx", "test/int/support/eliciting-server.ts"],
        elicitation: true,
        ...revision,
      },
    },
    tools: {
      // The 2026-07-28 server offers only the URL-mode tool.
      ...(modern
        ? {}
        : {
            book_review_slot: {
              server: "booking",
              description: "Books a review slot on a date the user picks.",
              risk: "read",
              timeout_ms: 5_000,
            },
          }),
      open_consent_page: {
        server: "booking",
        description: "Asks the user to open a page of the server's.",
        risk: "read",
        timeout_ms: 5_000,
      },
    },
    elicitation: { timeout_ms: timeoutMs },
  };
  await writeFile(file, JSON.stringify(config, null, 2));
  return file;
}

export const proposeBooking = (topic: string): ScriptedCompletion => ({
  kind: "completion",
  tool_calls: [{ id: "call_booking_1", name: "book_review_slot", arguments: JSON.stringify({ topic }) }],
  finish_reason: "tool_calls",
  usage: USAGE,
});

export const proposeConsentPage = (page: ConsentPage): ScriptedCompletion => ({
  kind: "completion",
  tool_calls: [{ id: "call_consent_1", name: "open_consent_page", arguments: JSON.stringify({ page }) }],
  finish_reason: "tool_calls",
  usage: USAGE,
});

/** The `elicitation` event's payload, as the run's stream carries it. */
export interface ElicitationEventData {
  type: "elicitation";
  elicitation_id: string;
  thread_id: string;
  call_id: string;
  server: string;
  tool: string;
  message: string;
  requested_schema: { type: "object"; properties: Record<string, Record<string, unknown>>; required?: string[] };
  defaults: Record<string, unknown>;
  expires_at: string;
  mode?: "form" | "url";
  url?: string;
  host?: string;
}

/** The owner, as the host's elicitation broker: answers every question with `answer` and keeps what was asked. */
export function scriptedOwner(answer: ElicitationAnswer): ElicitationBroker & { asked: ElicitationQuestion[] } {
  const asked: ElicitationQuestion[] = [];
  return {
    asked,
    async ask(question) {
      asked.push(question);
      return answer;
    },
  };
}
