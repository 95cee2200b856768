/**
 * What a reviewer and a student see (issue 37), in headless Chromium at
 * 1280 and 375 px against real server processes with the rules planner:
 *
 * - an expired review cannot be decided: the owner's page and the reviewer's
 *   inbox say when it expired and who must ask again, offer no decision, and
 *   the server refuses a decision on both paths (`POST /reviews/{id}`, a run
 *   resumed with `command.resume`) as `review_expired` before anything runs;
 * - after a mixed decision (approve 2, reject 1, edit 1) the reviewer sees
 *   each action's outcome and the thread's final answer;
 * - a run that needs a fact ends with the assistant's question, the input
 *   focused for the answer;
 * - at every moment: no ISO timestamp, raw JSON, enum value or millisecond
 *   count in the rendered text, nothing wider than the viewport, and axe-core
 *   (WCAG 2.1 A/AA) finds nothing serious or critical.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser, signInAs, type TestBrowser } from "./support/browser.js";
import { axeViolations, leaksIn, overflowIn, unreachableScrollRegions } from "./support/page-checks.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";

const PLAN_OF_FOUR =
  "Use my notes to plan 160 minutes of attention study over 4 days, at most 40 minutes a day, " +
  "starting 2026-12-02 at 18:00 UTC, and put it in my calendar";
const PLAN_OF_THREE =
  "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day, " +
  "starting 2026-12-02 at 18:00 UTC, and put it in my calendar";
const NO_START = "Plan 5 hours of revision on normalization, max 90 minutes a day, and put it in my calendar";
const QUESTION = "Compare self-attention with cross-attention using my notes";

/** The shipped config without caseops (never used here), the calendar write's review deadline set to `ttlMs`. */
async function writeConfig(directory: string, ttlMs?: number): Promise<string> {
  const shipped = JSON.parse(await readFile(path.join(REPO_ROOT, "warrant.config.json"), "utf8")) as {
    servers: Record<string, unknown>;
    tools: Record<string, { server: string; approval_ttl_ms?: number }>;
  };
  delete shipped.servers["caseops"];
  shipped.tools = Object.fromEntries(
    Object.entries(shipped.tools).filter(([, contract]) => contract.server !== "caseops"),
  );
  if (ttlMs !== undefined && shipped.tools["create_study_event"])
    shipped.tools["create_study_event"].approval_ttl_ms = ttlMs;
  const file = path.join(directory, `warrant.config.${ttlMs ?? "default"}.json`);
  await writeFile(file, JSON.stringify(shipped));
  return file;
}

type StoredEvent = Record<string, unknown>;
const createdSince = (before: StoredEvent[], now: StoredEvent[]): StoredEvent[] => {
  const seen = new Set(before.map((event) => String(event["event_id"])));
  return now.filter((event) => !seen.has(String(event["event_id"])));
};
const instant = (event: StoredEvent, which: "start" | "end"): number => {
  const value = event[which] ?? event[`${which}_at`];
  return value instanceof Date ? value.getTime() : Date.parse(String(value));
};

let directory: string;
let main: ServerSandbox | undefined;
let short: ServerSandbox | undefined;
let server: ServerProcess;
let shortServer: ServerProcess;
let browser: TestBrowser | undefined;

const card = (page: Page, index: number) => page.locator("article.approval-card").nth(index);

async function ask(page: Page, text: string): Promise<void> {
  await page.getByLabel("Your message").fill(text);
  await page.getByLabel("Your message").press("Enter");
}

/** Every check on what a person sees, at this moment of the page. */
async function seen(page: Page, moment: string): Promise<void> {
  expect({ moment, leaks: await leaksIn(page) }).toEqual({ moment, leaks: [] });
  expect({ moment, overflow: await overflowIn(page) }).toEqual({ moment, overflow: [] });
  expect({ moment, axe: await axeViolations(page) }).toEqual({ moment, axe: [] });
  expect({ moment, scroll: await unreachableScrollRegions(page) }).toEqual({ moment, scroll: [] });
}

const threadOf = (page: Page): string => new URL(page.url()).searchParams.get("thread") ?? "";

describe.runIf(BROWSER_TESTS_RUN)("what the reviewer and the student see (issue 37)", () => {
  beforeAll(async () => {
    buildPage();
    directory = await mkdtemp(path.join(os.tmpdir(), "browser-review-ui-"));
    main = await createServerSandbox();
    short = await createServerSandbox();
    [server, shortServer] = await Promise.all([
      main.start({ WARRANT_PLANNER: "rules", WARRANT_CONFIG: await writeConfig(directory) }),
      // Reviews of calendar writes expire a second after they are asked for.
      short.start({ WARRANT_PLANNER: "rules", WARRANT_CONFIG: await writeConfig(directory, 1_000) }),
    ]);
    browser = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    try {
      await browser?.close();
    } finally {
      try {
        await Promise.all([main?.cleanup(), short?.cleanup()]);
      } finally {
        if (directory) await rm(directory, { recursive: true, force: true });
      }
    }
  });

  for (const width of [1280, 375]) {
    describe(`at ${width} px`, () => {
      it("sign-in, chat and an answer read as words; an expired review cannot be decided and says so", async () => {
        const page = await browser!.page({ width, height: 900 });
        await page.goto(shortServer.url);
        await page.getByRole("button", { name: /^Alice\b/ }).waitFor();
        await seen(page, "sign-in");
        await signInAs(page, shortServer.url, "Alice");
        await seen(page, "chat");
        await ask(page, QUESTION);
        await expect
          .poll(() => page.getByTestId("termination").getAttribute("data-code"), { timeout: 60_000 })
          .toBe("final_answer");
        await seen(page, "answer");

        const before = await short!.calendarEvents();
        await page.getByRole("button", { name: "New conversation" }).click();
        await ask(page, PLAN_OF_THREE);
        await page.getByRole("region", { name: /Review needed: 3 actions/ }).waitFor({ timeout: 60_000 });
        const expired = page.getByTestId("review-expired");
        await expired.waitFor();
        expect(await expired.textContent()).toMatch(/^This request expired at \d\d:\d\d; you must ask again\.$/);
        // Nothing to decide: no choice, no send.
        expect(await page.getByRole("button", { name: "Send decisions" }).count()).toBe(0);
        expect(await card(page, 0).getByLabel("Approve").count()).toBe(0);
        await seen(page, "expired review cards (owner)");
        const threadId = threadOf(page);
        expect(threadId).not.toBe("");

        // Both decision paths refuse it before anything runs.
        const decisions = { decisions: [0, 1, 2].map(() => ({ type: "approve" })) };
        const resumed = await short!.fetch(shortServer, `/threads/${threadId}/runs/wait`, {
          user: "alice",
          method: "POST",
          body: JSON.stringify({ assistant_id: "agent", command: { resume: decisions } }),
        });
        expect(resumed.status).toBe(409);
        expect(((await resumed.json()) as { error: string }).error).toBe("review_expired");
        const viaInbox = await short!.fetch(shortServer, `/reviews/${threadId}`, {
          user: "rita",
          method: "POST",
          body: JSON.stringify(decisions),
        });
        expect(viaInbox.status).toBe(409);
        const refusal = (await viaInbox.json()) as { error: string; message: string };
        expect(refusal.error).toBe("review_expired");
        expect(refusal.message).toMatch(/^this request expired at \d\d:\d\d UTC; alice must ask again/);
        const runs = (await (
          await short!.fetch(shortServer, `/threads/${threadId}/runs`, { user: "alice" })
        ).json()) as unknown[];
        expect(runs).toHaveLength(1); // the first run only: no resume was started
        expect(createdSince(before, await short!.calendarEvents())).toHaveLength(0);

        // The reviewer's inbox lists it as expired; opening it says so and offers nothing to decide.
        const rita = await browser!.page({ width, height: 900 });
        await signInAs(rita, shortServer.url, "Rita");
        await rita.getByRole("button", { name: "Reviews", exact: true }).click();
        const row = rita.locator(`ul.reviews button[data-thread-id="${threadId}"]`);
        await row.waitFor();
        expect(await row.getAttribute("data-expired")).toBe("true");
        expect(await row.textContent()).toMatch(/Expired at \d\d:\d\d/);
        await seen(rita, "inbox with an expired review");
        await row.click();
        const words = rita.getByTestId("review-expired");
        await words.waitFor();
        expect(await words.textContent()).toMatch(/^This request expired at \d\d:\d\d; alice must ask again\./);
        expect(await rita.getByRole("button", { name: "Send decisions" }).count()).toBe(0);
        expect(await rita.getByText("Decision sent").count()).toBe(0);
        await seen(rita, "expired review detail");
        await rita.close();

        // The owner's way out: the same request, ready to send in a new conversation.
        await page.getByRole("button", { name: "Ask again in a new conversation" }).click();
        await expect.poll(() => threadOf(page)).toBe("");
        expect(await page.getByLabel("Your message").inputValue()).toBe(PLAN_OF_THREE);
        expect(await page.getByLabel("Your message").isDisabled()).toBe(false);
        await page.close();
      }, 240_000);

      it("after approve 2, reject 1, edit 1 the reviewer sees each action's outcome and the final answer", async () => {
        const before = await main!.calendarEvents();
        const alice = await browser!.page({ width, height: 900 });
        await signInAs(alice, server.url, "Alice");
        await ask(alice, PLAN_OF_FOUR);
        await alice.getByRole("region", { name: /Review needed: 4 actions/ }).waitFor({ timeout: 60_000 });
        await seen(alice, "review cards (owner)");
        const threadId = threadOf(alice);

        const rita = await browser!.page({ width, height: 900 });
        await signInAs(rita, server.url, "Rita");
        await rita.getByRole("button", { name: "Reviews", exact: true }).click();
        const row = rita.locator(`ul.reviews button[data-thread-id="${threadId}"]`);
        await row.waitFor();
        expect(await row.getAttribute("data-expired")).toBe("false");
        await seen(rita, "inbox");
        await row.click();
        await rita.getByRole("region", { name: /Review needed: 4 actions/ }).waitFor();
        await seen(rita, "review detail");
        await card(rita, 0).getByLabel("Approve").check();
        await card(rita, 1).getByLabel("Approve").check();
        await card(rita, 2).getByLabel("Reject").check();
        await card(rita, 2).getByLabel("Why (shown to the agent)").fill("Not on the third day");
        await card(rita, 3).getByLabel("Edit").check();
        await card(rita, 3).getByLabel("start *").fill("2026-12-05T19:00:00Z");
        await card(rita, 3).getByLabel("end *").fill("2026-12-05T19:40:00Z");
        await rita.getByRole("button", { name: "Send decisions" }).click();

        const outcomes = rita.getByTestId("review-outcome-list").locator("li[data-outcome]");
        await expect.poll(() => outcomes.count(), { timeout: 60_000 }).toBe(4);
        expect(await outcomes.evaluateAll((rows) => rows.map((row) => row.getAttribute("data-outcome")))).toEqual([
          "created",
          "created",
          "rejected",
          "edited_and_created",
        ]);
        expect(await outcomes.nth(2).textContent()).toContain("Not on the third day");
        expect(await rita.getByTestId("review-outcome").getAttribute("data-status")).toBe("completed");
        expect(((await rita.locator(".final-answer p").textContent()) ?? "").trim()).not.toBe("");
        expect(await rita.getByText("Decision sent").count()).toBe(0);
        await seen(rita, "review outcome");

        const events = createdSince(before, await main!.calendarEvents());
        expect(events).toHaveLength(3);
        expect(events.every((event) => event["user_id"] === "alice")).toBe(true);
        expect(events.filter((event) => instant(event, "start") === Date.parse("2026-12-05T19:00:00Z"))).toHaveLength(
          1,
        );

        // The owner's page, reloaded: the finished run, in words.
        await alice.reload();
        await expect
          .poll(() => alice.getByTestId("termination").getAttribute("data-code"), { timeout: 30_000 })
          .toBe("final_answer");
        await seen(alice, "run panel after the decision (owner)");
        // The thread list: a long request is shortened, its full text on hover; every thread in reach.
        const current = alice.locator("nav.threads button.thread.current span[title]");
        expect(await current.getAttribute("title")).toBe(PLAN_OF_FOUR);
        expect(((await current.textContent()) ?? "").length).toBeLessThan(PLAN_OF_FOUR.length);
        const list = await alice.locator("nav.threads").evaluate((nav) => ({
          shown: nav.clientHeight,
          needed: nav.scrollHeight,
          threads: nav.querySelectorAll("button.thread").length,
        }));
        expect(list.threads).toBeGreaterThanOrEqual(1);
        expect(list.needed).toBeLessThanOrEqual(list.shown + 1); // no list scrolled inside a small box
        await rita.close();
        await alice.close();
      }, 240_000);

      it("a run that needs a fact ends with the assistant's question, the input ready for the answer", async () => {
        const page = await browser!.page({ width, height: 900 });
        await signInAs(page, server.url, "Alice");
        await ask(page, NO_START);
        const question = page.getByTestId("assistant-question");
        await question.waitFor({ timeout: 60_000 });
        expect(await question.textContent()).toMatch(/^Assistant asks\s*On which date\b[^?]*\?/i);
        const box = page.getByLabel("Your message");
        expect(await box.isDisabled()).toBe(false);
        await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("message");
        // The question is the last thing said before the input.
        expect(await page.getByTestId("termination").count()).toBe(0);
        await seen(page, "assistant's question");
        await box.fill("starting 2026-12-07 at 18:00 UTC");
        await box.press("Enter");
        await page.getByRole("region", { name: /Review needed: 4 actions/ }).waitFor({ timeout: 60_000 });
        await page.close();
      }, 240_000);
    });
  }
});
