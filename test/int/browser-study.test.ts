/**
 * Study plans through the page with the rules planner (no model), to the
 * contract of issue 13: "Use my notes to plan 120 minutes of attention study
 * over 3 days, at most 60 minutes a day, starting 2026-12-02 at 18:00 UTC,
 * and put it in my calendar" → one review of three `create_study_event`
 * proposals. Then: approve two and reject one → exactly two events; edit one
 * action's time → the edited event; rita approves alice's pending review
 * from the reviewer inbox (`GET /reviews`).
 *
 * (The same cards and the inbox with a scripted model planner are in
 * browser-approvals.test.ts.)
 */
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import type { Page } from "playwright-core";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser, type TestBrowser, signInAs } from "./support/browser.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";

const STUDY_REQUEST =
  "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day, " +
  "starting 2026-12-02 at 18:00 UTC, and put it in my calendar";

const SCENARIOS = {
  approveTwoRejectOne:
    "alice asks for a study plan in her calendar, approves two sessions and rejects one: exactly two events",
  editOneTime: "alice edits one session's time: the edited event is created, the others as proposed",
  reviewerInbox: "rita approves alice's pending review from the inbox: alice's events are created once",
} as const;

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
let server: ServerProcess;
let browser: TestBrowser | undefined;

/** Alice asks for the plan and waits for its one review of three sessions. */
async function askForPlan(page: Page): Promise<void> {
  await page.getByLabel("Your message").fill(STUDY_REQUEST);
  await page.getByLabel("Your message").press("Enter");
  await page.getByRole("region", { name: /Review needed: 3 actions/ }).waitFor({ timeout: 60_000 });
  const names = await page
    .locator("article.approval-card")
    .evaluateAll((cards) => cards.map((card) => card.getAttribute("data-tool")));
  expect(names).toEqual(["create_study_event", "create_study_event", "create_study_event"]);
}

const card = (page: Page, index: number) => page.locator("article.approval-card").nth(index);

async function finished(page: Page): Promise<void> {
  await expect
    .poll(() => page.getByTestId("termination").getAttribute("data-code"), { timeout: 60_000 })
    .toBe("final_answer");
}

const eventsOf = async (user: string, before: StoredEvent[]) =>
  createdSince(before, await sandbox!.calendarEvents()).filter((event) => event["user_id"] === user);

describe.runIf(BROWSER_TESTS_RUN)("study plans through the page (rules planner)", () => {
  const fixture = useSandbox();
  beforeAll(async () => {
    buildPage();
    sandbox = fixture.add(await createServerSandbox());
    server = await sandbox.start({ WARRANT_PLANNER: "rules" });
    browser = fixture.add(await launchBrowser());
  }, 180_000);

  it(SCENARIOS.approveTwoRejectOne, async () => {
    const before = await sandbox!.calendarEvents();
    const page = await browser!.page();
    await signInAs(page, server.url, "Alice");
    await askForPlan(page);
    await card(page, 0).getByLabel("Approve").check();
    await card(page, 1).getByLabel("Approve").check();
    await card(page, 2).getByLabel("Reject").check();
    await card(page, 2).getByLabel("Why (shown to the agent)").fill("Not that day");
    await page.getByRole("button", { name: "Send decisions" }).click();
    await finished(page);
    expect(await eventsOf("alice", before)).toHaveLength(2);
    expect(
      await page.getByRole("region", { name: "Denied proposals" }).locator('li[data-code="approval_rejected"]').count(),
    ).toBe(1);
    await browser!.screenshot(page, "study-two-of-three");
    await page.close();
  }, 120_000);

  it(SCENARIOS.editOneTime, async () => {
    const before = await sandbox!.calendarEvents();
    const page = await browser!.page();
    await signInAs(page, server.url, "Alice");
    await page.getByRole("button", { name: "New conversation" }).click();
    await askForPlan(page);
    await card(page, 0).getByLabel("Edit").check();
    await card(page, 0).getByLabel("start *").fill("2026-12-02T19:00:00Z");
    await card(page, 0).getByLabel("end *").fill("2026-12-02T19:40:00Z");
    await card(page, 1).getByLabel("Approve").check();
    await card(page, 2).getByLabel("Approve").check();
    await page.getByRole("button", { name: "Send decisions" }).click();
    await finished(page);
    const events = await eventsOf("alice", before);
    expect(events).toHaveLength(3);
    expect(events.filter((event) => instant(event, "start") === Date.parse("2026-12-02T19:00:00Z"))).toHaveLength(1);
    await page.close();
  }, 120_000);

  it(SCENARIOS.reviewerInbox, async () => {
    const before = await sandbox!.calendarEvents();
    const alice = await browser!.page();
    await signInAs(alice, server.url, "Alice");
    await alice.getByRole("button", { name: "New conversation" }).click();
    await askForPlan(alice);

    const rita = await browser!.page();
    await signInAs(rita, server.url, "Rita");
    await rita.getByRole("button", { name: "Reviews", exact: true }).click();
    await rita.locator("ul.reviews button", { hasText: "alice:" }).first().click();
    await rita.getByRole("region", { name: /Review needed: 3 actions/ }).waitFor({ timeout: 30_000 });
    await rita.getByRole("button", { name: "Approve all" }).click();
    await rita.getByRole("button", { name: "Send decisions" }).click();
    await expect
      .poll(() => rita.getByTestId("review-outcome").getAttribute("data-status"), { timeout: 60_000 })
      .toBe("completed");
    expect(await eventsOf("alice", before)).toHaveLength(3);
    await browser!.screenshot(rita, "study-reviewer-inbox");
    await alice.close();
    await rita.close();
  }, 120_000);
});
