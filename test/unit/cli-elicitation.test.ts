/**
 * The terminal's form for a server's question (src/cli/elicitation.ts): the
 * card names the server, message, fields and the route; answering asks each
 * field and leaves empty ones out (the server's default applies).
 */
import { describe, expect, it } from "vitest";
import { askElicitation, elicitationCard, type OpenElicitation } from "../../src/cli/elicitation.js";

const QUESTION: OpenElicitation = {
  elicitation_id: "6f7c2f6e-1d1a-4a39-9d0e-2b1f3a4c5d6e",
  thread_id: "0b9d8c7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e",
  server: "booking",
  tool: "book_review_slot",
  message: "Which day should the review be on?",
  requested_schema: {
    type: "object",
    properties: {
      date: { type: "string", format: "date", title: "Date" },
      note: { type: "string", title: "Note", default: "none" },
      seats: { type: "integer", title: "Seats" },
    },
    required: ["date"],
  },
  defaults: { note: "none" },
  expires_at: "2026-12-02T07:00:00.000Z",
};

function scriptedIO(lines: string[]) {
  const written: string[] = [];
  return {
    written,
    write: (text: string) => void written.push(text),
    readLine: async () => lines.shift(),
  };
}

describe("elicitation at the terminal", () => {
  it("prints the server, its message, each field and the route", () => {
    const card = elicitationCard(QUESTION);
    expect(card).toContain("The booking server asks (during book_review_slot");
    expect(card).toContain("  Which day should the review be on?");
    expect(card).toContain("Date (date: string, date, required)");
    expect(card).toContain('Note (note: string, default "none")');
    expect(card).toContain(`POST /threads/${QUESTION.thread_id}/elicitations/${QUESTION.elicitation_id}`);
  });

  it("asks each field; empty ones are left to the default; numbers are numbers", async () => {
    const io = scriptedIO(["x", "a", "2026-12-24", "", "2"]);
    expect(await askElicitation(QUESTION, io)).toEqual({ action: "accept", content: { date: "2026-12-24", seats: 2 } });
    expect(io.written.join("")).toContain("answer a, d or c");
    expect(io.written.join("")).toContain('Note ["none"]: ');
  });

  it("declines, cancels, and gives up when input ends", async () => {
    expect(await askElicitation(QUESTION, scriptedIO(["d"]))).toEqual({ action: "decline" });
    expect(await askElicitation(QUESTION, scriptedIO(["cancel"]))).toEqual({ action: "cancel" });
    expect(await askElicitation(QUESTION, scriptedIO(["a", "2026-12-24"]))).toBeUndefined();
  });
});
