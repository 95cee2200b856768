/**
 * The terminal's consent for a server's request to open a URL (URL-mode
 * elicitation, src/cli/elicitation.ts): the card names the server, message,
 * host and full URL; only an explicit yes accepts, and then the URL is
 * printed for the user to open; anything else declines.
 */
import { describe, expect, it } from "vitest";
import { askElicitation, elicitationCard, type OpenElicitation } from "../../src/cli/elicitation.js";

const URL_QUESTION: OpenElicitation = {
  elicitation_id: "6f7c2f6e-1d1a-4a39-9d0e-2b1f3a4c5d6e",
  thread_id: "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e",
  server: "calendar",
  tool: "connect_calendar",
  message: "Connect your calendar on our consent page.",
  requested_schema: { type: "object", properties: {} },
  defaults: {},
  expires_at: "2026-12-02T07:00:00.000Z",
  mode: "url",
  url: "https://consent.example.com/connect?session=42",
  host: "consent.example.com",
};

function scriptedIO(lines: string[]) {
  const written: string[] = [];
  return { written, write: (text: string) => void written.push(text), readLine: async () => lines.shift() };
}

describe("URL-mode elicitation at the terminal", () => {
  it("prints the server, the message, the host and the full URL, and the route", () => {
    const card = elicitationCard(URL_QUESTION);
    expect(card).toContain("The calendar server asks you to open a page (during connect_calendar");
    expect(card).toContain("  Connect your calendar on our consent page.");
    expect(card).toContain("  host: consent.example.com\n");
    expect(card).toContain("  url:  https://consent.example.com/connect?session=42\n");
    expect(card).toContain(`POST /threads/${URL_QUESTION.thread_id}/elicitations/${URL_QUESTION.elicitation_id}`);
    expect(card).not.toContain("fields:");
  });

  it("an explicit yes accepts with no content and prints the URL to open", async () => {
    const io = scriptedIO(["y"]);
    expect(await askElicitation(URL_QUESTION, io)).toEqual({ action: "accept" });
    expect(io.written.join("")).toContain("Open consent.example.com yourself? Consent (y/N): ");
    expect(io.written.join("")).toContain("\n  https://consent.example.com/connect?session=42\n");
  });

  it("anything else declines without printing the URL; the end of input gives up", async () => {
    for (const line of ["", "n", "no", "open", "a"]) {
      const io = scriptedIO([line]);
      expect(await askElicitation(URL_QUESTION, io)).toEqual({ action: "decline" });
      expect(io.written.join("")).not.toContain("session=42");
    }
    expect(await askElicitation(URL_QUESTION, scriptedIO([]))).toBeUndefined();
  });
});
