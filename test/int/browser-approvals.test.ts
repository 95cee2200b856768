/**
 * Approval cards in headless Chromium against a real server process on real
 * Postgres. The planner is the model planner on the fake OpenAI-compatible
 * endpoint, scripted to propose calendar writes (the rules planner's study
 * plans are tested in browser-study.test.ts): approve two and reject one →
 * exactly two events; edit one action's time → the edited event; an invalid
 * edit is stopped in the page, naming the field; a denied proposal is listed
 * with its check and reason; rita approves alice's pending review from the
 * reviewer inbox.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { finalReply, startModelServer } from "../support/scripted-model.js";
import type { Page } from "playwright-core";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser, type TestBrowser, signInAs } from "./support/browser.js";
import type { FakeOpenAI, ScriptedCompletion } from "./support/fake-openai.js";
import type { ServerProcess, ServerSandbox } from "./support/server-process.js";

const USAGE = { prompt_tokens: 50, completion_tokens: 20 };
const session = (day: number) => ({
  title: `Attention study, day ${day}`,
  start: `2026-12-0${day + 1}T18:00:00Z`,
  end: `2026-12-0${day + 1}T18:40:00Z`,
  timezone: "UTC",
  calendar: "study",
});
const proposeEvents = (sessions: ReturnType<typeof session>[]): ScriptedCompletion => ({
  kind: "completion",
  tool_calls: sessions.map((args, index) => ({
    id: `call_event_${index + 1}`,
    name: "create_study_event",
    arguments: JSON.stringify(args),
  })),
  finish_reason: "tool_calls",
  usage: USAGE,
});

type StoredEvent = Record<string, unknown>;
/** An event's start or end in ms, from the calendar's file store (`start`) or its table (`start_at`). */
const instant = (event: StoredEvent, which: "start" | "end"): number => {
  const value = event[which] ?? event[`${which}_at`];
  return value instanceof Date ? value.getTime() : Date.parse(String(value));
};
/** The events created since `before` (a listing taken earlier), whatever order the store lists them in. */
const createdSince = (before: StoredEvent[], now: StoredEvent[]): StoredEvent[] => {
  const seen = new Set(before.map((event) => String(event["event_id"])));
  return now.filter((event) => !seen.has(String(event["event_id"])));
};

let sandbox: ServerSandbox | undefined;
let fake: FakeOpenAI | undefined;
let server: ServerProcess;
let browser: TestBrowser | undefined;

const signInAsAlice = (page: Page) => signInAs(page, server.url, "Alice");

async function ask(page: Page, text: string): Promise<void> {
  await page.getByLabel("Your message").fill(text);
  await page.getByLabel("Your message").press("Enter");
}

const card = (page: Page, index: number) => page.locator("article.approval-card").nth(index);

describe.runIf(BROWSER_TESTS_RUN)("approval cards in Chromium", () => {
  const fixture = useSandbox();
  beforeAll(async () => {
    buildPage();
    ({ fake, servers: sandbox, server } = await startModelServer(fixture));
    browser = fixture.add(await launchBrowser());
  }, 180_000);
  afterEach(() => {
    // Every scripted completion was used: the page sent exactly the runs the test expects.
    expect(fake?.pending()).toBe(0);
  });

  it("approve two and reject one: exactly two events, the rejection listed with its reason", async () => {
    const before = await sandbox!.calendarEvents();
    fake!.enqueue(
      proposeEvents([session(1), session(2), session(3)]),
      finalReply("Two sessions are in your calendar."),
    );
    const page = await browser!.page();
    await signInAsAlice(page);
    await ask(page, "Put three attention study sessions in my calendar");

    const panel = page.getByRole("region", { name: /Review needed: 3 actions/ });
    await panel.waitFor({ timeout: 60_000 });
    expect(await page.locator("article.approval-card").count()).toBe(3);
    expect(await card(page, 0).locator(".destination").textContent()).toContain("calendar server");
    expect(await card(page, 0).locator(".countdown").textContent()).toMatch(/expires in \d+:\d\d/);
    // Typing is closed while a review waits.
    expect(await page.getByLabel(/Answer the pending review/).isDisabled()).toBe(true);

    await card(page, 0).getByLabel("Approve").check();
    await card(page, 1).getByLabel("Approve").check();
    await card(page, 2).getByLabel("Reject").check();
    await card(page, 2).getByLabel("Why (shown to the agent)").fill("Not on the third day");
    await browser!.screenshot(page, "approvals-three-decided");
    await page.getByRole("button", { name: "Send decisions" }).click();

    await expect
      .poll(() => page.getByTestId("termination").getAttribute("data-code"), { timeout: 60_000 })
      .toBe("final_answer");
    const events = createdSince(before, await sandbox!.calendarEvents());
    expect(events.map((event) => event["title"]).sort()).toEqual([session(1).title, session(2).title]);
    expect(events.every((event) => event["user_id"] === "alice")).toBe(true);

    const ledgerRows = page.getByRole("region", { name: "Tool ledger" }).locator("li[data-status]");
    expect(
      await ledgerRows.evaluateAll((rows) =>
        rows.map((row) => `${row.getAttribute("data-tool")}:${row.getAttribute("data-status")}`),
      ),
    ).toEqual(["create_study_event:succeeded", "create_study_event:succeeded"]);
    const denial = page.getByRole("region", { name: "Denied proposals" }).locator("li");
    await denial.first().waitFor();
    expect(await denial.count()).toBe(1);
    expect(await denial.getAttribute("data-code")).toBe("approval_rejected");
    expect(await denial.getAttribute("data-check")).not.toBe("");
    expect(await denial.textContent()).toContain("Not on the third day");
    await browser!.screenshot(page, "approvals-two-events");
    await page.close();
  }, 120_000);

  it("edit one action's time: the edited event is created; an invalid edit is stopped in the page", async () => {
    const before = await sandbox!.calendarEvents();
    fake!.enqueue(proposeEvents([session(1)]), finalReply("Your session is booked."));
    const page = await browser!.page();
    await signInAsAlice(page);
    await ask(page, "Book one attention study session");

    await page.getByRole("region", { name: /Review needed: 1 action/ }).waitFor({ timeout: 60_000 });
    const first = card(page, 0);
    await first.getByLabel("Edit").check();
    // The form is generated from the tool's schema: the model-visible arguments only.
    expect(
      await first
        .locator(".arguments-form input")
        .evaluateAll((inputs) => inputs.map((input) => input.getAttribute("name"))),
    ).toEqual(["title", "description", "start", "end", "timezone", "calendar"]);

    await first.getByLabel("start *").fill("tomorrow evening");
    await page.getByRole("button", { name: "Send decisions" }).click();
    const fieldError = first.locator(".field-error");
    await fieldError.waitFor();
    expect(await fieldError.textContent()).toContain("start");
    expect(fake!.pending()).toBe(1); // the resume was not sent: the final answer is still unused

    await first.getByLabel("start *").fill("2026-12-05T07:30:00Z");
    await first.getByLabel("end *").fill("2026-12-05T08:10:00Z");
    await page.getByRole("button", { name: "Send decisions" }).click();

    await expect
      .poll(() => page.getByTestId("termination").getAttribute("data-code"), { timeout: 60_000 })
      .toBe("final_answer");
    const events = createdSince(before, await sandbox!.calendarEvents());
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ title: session(1).title, user_id: "alice" });
    expect(instant(events[0]!, "start")).toBe(Date.parse("2026-12-05T07:30:00Z"));
    expect(instant(events[0]!, "end")).toBe(Date.parse("2026-12-05T08:10:00Z"));
    await browser!.screenshot(page, "approvals-edited-event");
    await page.close();
  }, 120_000);

  it("lists a denied proposal with its check and reason", async () => {
    fake!.enqueue(
      {
        kind: "completion",
        tool_calls: [
          { id: "call_read_1", name: "read_note", arguments: JSON.stringify({ note_id: "cs301.self-attention" }) },
        ],
        finish_reason: "tool_calls",
        usage: USAGE,
      },
      finalReply("I cannot read that note."),
    );
    const page = await browser!.page();
    await signInAs(page, server.url, "Bob");
    await ask(page, "Read the cs301 self-attention note");
    await expect
      .poll(() => page.getByTestId("termination").getAttribute("data-code"), { timeout: 60_000 })
      .toBe("final_answer");
    const denial = page.getByRole("region", { name: "Denied proposals" }).locator("li");
    expect(await denial.count()).toBe(1);
    expect(await denial.getAttribute("data-code")).toBe("access_denied");
    expect(await denial.getAttribute("data-tool")).toBe("read_note");
    expect(await denial.getAttribute("data-code")).toBe("access_denied");
    expect(await denial.textContent()).toMatch(/^Read note: \S/);
    // The named check of the policy pipeline that refused it.
    expect(await denial.getAttribute("data-check")).toMatch(/^(run_bound|authorized)$/);
    expect(await denial.textContent()).toContain(`(check: ${await denial.getAttribute("data-check")}`);
    // Nothing ran: a denied proposal never reaches the tool.
    expect(await page.getByRole("region", { name: "Tool ledger" }).count()).toBe(0);
    await browser!.screenshot(page, "denied-proposal");
    await page.close();
  }, 120_000);

  it("rita approves alice's pending review from the inbox: one event, for alice", async () => {
    const before = await sandbox!.calendarEvents();
    fake!.enqueue(proposeEvents([session(4)]), finalReply("Booked after review."));
    const alice = await browser!.page();
    await signInAs(alice, server.url, "Alice");
    await ask(alice, "Book a session; my reviewer will approve it");
    await alice.getByRole("region", { name: /Review needed: 1 action/ }).waitFor({ timeout: 60_000 });

    const rita = await browser!.page();
    await signInAs(rita, server.url, "Rita");
    await rita.getByRole("button", { name: "Reviews", exact: true }).click();
    const entry = rita.locator("ul.reviews button", { hasText: "alice: Book a session" });
    await entry.waitFor();
    await entry.click();
    await rita.getByRole("region", { name: /Review needed: 1 action/ }).waitFor();
    expect(await card(rita, 0).getAttribute("data-tool")).toBe("create_study_event");
    await card(rita, 0).getByLabel("Approve").check();
    await rita.getByRole("button", { name: "Send decisions" }).click();
    await expect
      .poll(() => rita.getByTestId("review-outcome").getAttribute("data-status"), { timeout: 60_000 })
      .toBe("completed");
    await browser!.screenshot(rita, "reviewer-inbox-approved");

    const events = createdSince(before, await sandbox!.calendarEvents());
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ user_id: "alice", title: session(4).title });
    // The owner's page, reloaded, shows the finished run; the review has left the inbox.
    await alice.reload();
    await expect
      .poll(() => alice.getByTestId("termination").getAttribute("data-code"), { timeout: 30_000 })
      .toBe("final_answer");
    expect(await alice.getByRole("region", { name: /Review needed/ }).count()).toBe(0);
    await rita.getByRole("button", { name: "Back to the inbox" }).click();
    await expect.poll(() => rita.locator("ul.reviews button", { hasText: "alice: Book a session" }).count()).toBe(0);
    await alice.close();
    await rita.close();
  }, 180_000);
});
