/**
 * The README's pictures of the page ("The page"), at 1280 and 375 px: the
 * chat with an answer, a review's cards, the reviewer's inbox and what came
 * of a decision. `npm run screenshots` writes them to docs/screenshots/
 * (committed); run as part of the tests they land in test-output/ instead,
 * so a test run never changes the checkout.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { REPO_ROOT } from "../../src/env.js";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser, signInAs, type TestBrowser } from "./support/browser.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";

const OUT =
  process.env["WARRANT_SCREENSHOTS"] === "docs"
    ? path.join(REPO_ROOT, "docs", "screenshots")
    : path.join(REPO_ROOT, "test-output", "screenshots");

const QUESTION = "Compare self-attention with cross-attention using my notes";
const PLAN =
  "Use my notes to plan 160 minutes of attention study over 4 days, at most 40 minutes a day, " +
  "starting 2026-12-14 at 18:00 UTC, and put it in my calendar";

let sandbox: ServerSandbox | undefined;
let server: ServerProcess;
let browser: TestBrowser | undefined;

async function ask(page: Page, text: string): Promise<void> {
  await page.getByLabel("Your message").fill(text);
  await page.getByLabel("Your message").press("Enter");
}

/** One screen of the page (as a person sees it), scrolled so that `top` starts it; the whole page without `top`. */
async function shoot(page: Page, name: string, top?: string): Promise<void> {
  // No caret blinking, no focus ring caught mid-way: the same picture every time.
  await page.evaluate((selector) => {
    (document.activeElement as HTMLElement | null)?.blur();
    const element = selector ? document.querySelector(selector) : null;
    window.scrollTo(0, element ? element.getBoundingClientRect().top + window.scrollY - 8 : 0);
  }, top ?? null);
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file, fullPage: top === undefined, animations: "disabled", caret: "hide" });
  expect((await fs.stat(file)).size).toBeGreaterThan(5_000);
}

const card = (page: Page, index: number) => page.locator("article.approval-card").nth(index);

describe.runIf(BROWSER_TESTS_RUN)("screenshots of the page", () => {
  const fixture = useSandbox();
  beforeAll(async () => {
    buildPage();
    await fs.mkdir(OUT, { recursive: true });
    sandbox = fixture.add(await createServerSandbox());
    server = await sandbox.start({ WARRANT_PLANNER: "rules" });
    browser = fixture.add(await launchBrowser());
  }, 180_000);

  for (const width of [1280, 375]) {
    it(`chat, review cards, inbox and review outcome at ${width} px`, async () => {
      const height = width > 700 ? 860 : 780;
      const alice = await browser!.page({ width, height });
      await signInAs(alice, server.url, "Alice");
      await ask(alice, QUESTION);
      await expect
        .poll(() => alice.getByTestId("termination").getAttribute("data-code"), { timeout: 60_000 })
        .toBe("final_answer");
      await shoot(alice, `chat-${width}`, width > 700 ? undefined : "li.message.human");

      await alice.getByRole("button", { name: "New conversation" }).click();
      await ask(alice, PLAN);
      await alice.getByRole("region", { name: /Review needed: 4 actions/ }).waitFor({ timeout: 60_000 });
      await shoot(alice, `review-cards-${width}`, "section.approvals");
      const threadId = new URL(alice.url()).searchParams.get("thread") ?? "";

      const rita = await browser!.page({ width, height });
      await signInAs(rita, server.url, "Rita");
      await rita.getByRole("button", { name: "Reviews", exact: true }).click();
      const row = rita.locator(`ul.reviews button[data-thread-id="${threadId}"]`);
      await row.waitFor();
      await shoot(rita, `inbox-${width}`);
      await row.click();
      await rita.getByRole("region", { name: /Review needed: 4 actions/ }).waitFor();
      await card(rita, 0).getByLabel("Approve").check();
      await card(rita, 1).getByLabel("Approve").check();
      await card(rita, 2).getByLabel("Reject").check();
      await card(rita, 2).getByLabel("Why (shown to the agent)").fill("Not on the third day");
      await card(rita, 3).getByLabel("Edit").check();
      await card(rita, 3).getByLabel("start *").fill("2026-12-17T19:00:00Z");
      await card(rita, 3).getByLabel("end *").fill("2026-12-17T19:40:00Z");
      await rita.getByRole("button", { name: "Send decisions" }).click();
      await expect
        .poll(() => rita.getByTestId("review-outcome-list").locator("li[data-outcome]").count(), { timeout: 60_000 })
        .toBe(4);
      await shoot(rita, `review-outcome-${width}`, width > 700 ? undefined : "#review-title");
      await rita.close();
      await alice.close();
    }, 240_000);
  }
});
