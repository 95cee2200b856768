/** The terminal review: card contents, the resume command, and the prompt driven by scripted answers. */
import { describe, expect, it } from "vitest";
import {
  approvalCard,
  pendingReviewOf,
  resumeCommand,
  reviewInteractively,
  shellQuote,
  type ReviewIO,
} from "../../src/cli/review.js";

const payload = {
  action_requests: [
    {
      name: "create_study_event",
      args: {
        title: "Study attention",
        description: "Topic: attention\nNotes: cs301/a",
        start: "2026-12-02T18:00:00Z",
        end: "2026-12-02T19:00:00Z",
        timezone: "UTC",
        calendar: "study",
      },
      description: "…",
    },
    {
      name: "create_study_event",
      args: {
        title: "Study more",
        start: "2026-12-03T18:00:00Z",
        end: "2026-12-03T19:00:00Z",
        timezone: "UTC",
        calendar: "study",
      },
      description: "…",
    },
  ],
  review_configs: [
    { action_name: "create_study_event", allowed_decisions: ["approve", "edit", "reject"], rule: "owner_or_reviewer" },
    { action_name: "create_study_event", allowed_decisions: ["approve", "edit", "reject"], rule: "owner_or_reviewer" },
  ],
  approvals: [
    { action_id: "act_1", fingerprint: "f1", version: 1, expires_at: "2026-12-01T10:15:00.000Z" },
    { action_id: "act_2", fingerprint: "f2", version: 1, expires_at: "2026-12-01T10:15:00.000Z" },
  ],
};

function scripted(answers: string[]): ReviewIO & { output: string } {
  const io = {
    output: "",
    write: (text: string) => void (io.output += text),
    readLine: async () => answers.shift(),
  };
  return io;
}

describe("terminal review", () => {
  it("finds the review among interrupts and ignores other values", () => {
    expect(pendingReviewOf([{ something: "else" }])).toBeUndefined();
    expect(pendingReviewOf([{ ...payload, approvals: [] }])).toBeUndefined();
    expect(pendingReviewOf(["x", payload])?.approvals).toHaveLength(2);
  });

  it("shows per action what will happen in words, times in the viewer's zone, contents, expiry and the ids", () => {
    const card = approvalCard(payload, "Europe/Berlin");
    for (const expected of [
      "[1] Add to calendar study: Study attention (1 h), Wed 2 Dec, 19:00–20:00 (Europe/Berlin; the event's zone is UTC)",
      "Calendar    study",
      "Starts      Wed 2 Dec, 19:00",
      "Ends        Thu 3 Dec, 20:00",
      "Time zone   UTC",
      "Description Topic: attention",
      "Expires     Tue 1 Dec, 11:15 (Europe/Berlin)",
      "Details     tool create_study_event · action act_2 · rule owner_or_reviewer",
    ]) {
      expect(card).toContain(expected);
    }
    // No ISO timestamp and no JSON object in the card.
    expect(card).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
    expect(card).not.toMatch(/\{"/);
  });

  it("prints a resume command that approves each action by id, quoted for the shell", () => {
    expect(resumeCommand("alice", "t-1", payload)).toBe(
      "npm run chat -- --user alice --thread t-1 --resume " +
        `'{"decisions":[{"type":"approve","action_id":"act_1"},{"type":"approve","action_id":"act_2"}]}'`,
    );
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });

  it("asks per action: approve, edit with a JSON object (asking again until it is one), reject with a reason", async () => {
    const io = scripted(["x", "e", "[1]", "nope", '{"title":"Edited"}', "r", "too late"]);
    const answer = await reviewInteractively(payload, io);
    expect(answer).toEqual({
      decisions: [
        { type: "edit", action_id: "act_1", edited_action: { name: "create_study_event", args: { title: "Edited" } } },
        { type: "reject", action_id: "act_2", message: "too late" },
      ],
    });
    expect(io.output).toContain("answer a, e or r");
    expect(io.output).toContain("not an object");
    expect(io.output).toContain("not valid JSON");
  });

  it("approves, rejects without a reason, and sends nothing when input ends early", async () => {
    expect(await reviewInteractively(payload, scripted(["a", "r", ""]))).toEqual({
      decisions: [
        { type: "approve", action_id: "act_1" },
        { type: "reject", action_id: "act_2" },
      ],
    });
    expect(await reviewInteractively(payload, scripted(["approve"]))).toBeUndefined();
  });
});
