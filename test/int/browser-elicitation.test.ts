/**
 * A server's question during a tool call, answered in the page (headless
 * Chromium, real server process, real Postgres, the tests' eliciting stdio
 * server): the run's `elicitation` event shows a form with the server's
 * message, the date field and the note prefilled with its default; alice
 * picks a date and sends; the call completes with that date. Without the
 * form (or the event) the question times out and the server is told decline.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { finalReply, startModelServer } from "../support/scripted-model.js";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser, signInAs, type TestBrowser } from "./support/browser.js";
import { proposeBooking, writeElicitingConfig } from "./support/elicitation.js";
import type { FakeOpenAI } from "./support/fake-openai.js";
import type { ServerProcess, ServerSandbox } from "./support/server-process.js";

let sandbox: ServerSandbox | undefined;
let fake: FakeOpenAI | undefined;
let server: ServerProcess;
let browser: TestBrowser | undefined;
let directory: string;

describe.runIf(BROWSER_TESTS_RUN)("elicitation form in Chromium", () => {
  const fixture = useSandbox();
  beforeAll(async () => {
    buildPage();
    directory = await fixture.tempDir("warrant-browser-elicitation-");
    ({
      fake,
      servers: sandbox,
      server,
    } = await startModelServer(fixture, {
      WARRANT_CONFIG: await writeElicitingConfig(directory, 120_000),
    }));
    browser = fixture.add(await launchBrowser());
  }, 180_000);

  it("the owner picks the date in the form and the call completes with it", async () => {
    fake!.enqueue(proposeBooking("attention"), finalReply("Booked."));
    const page = await browser!.page();
    await signInAs(page, server.url, "Alice");
    await page.getByLabel("Your message").fill("Book a review slot for attention");
    await page.getByLabel("Your message").press("Enter");

    const form = page.getByRole("region", { name: "Question from the booking server" });
    await form.waitFor({ timeout: 60_000 });
    expect(await form.locator(".elicitation-message").textContent()).toBe(
      "Which day should the review of attention be on?",
    );
    // The note is prefilled with the server's default (SEP-1034).
    expect(await form.getByLabel("Note").inputValue()).toBe("none");
    await form.getByLabel("Date (required)").fill("2026-12-24");
    await browser!.screenshot(page, "elicitation-form");
    await form.getByRole("button", { name: "Send answer" }).click();

    await expect
      .poll(() => page.getByTestId("termination").getAttribute("data-code"), { timeout: 60_000 })
      .toBe("final_answer");
    expect(await form.count()).toBe(0);
    const rows = page.getByRole("region", { name: "Tool ledger" }).locator("li[data-status]");
    expect(
      await rows.evaluateAll((items) =>
        items.map((row) => `${row.getAttribute("data-tool")}:${row.getAttribute("data-status")}`),
      ),
    ).toEqual(["book_review_slot:succeeded"]);
    const threadId = new URL(page.url()).searchParams.get("thread");
    expect(threadId).toBeTruthy();
    const client = await sandbox!.client(server, "alice");
    const state = await client.threads.getState(threadId ?? "");
    const messages = (state.values as { messages: { type: string; content: unknown }[] }).messages;
    expect(messages.find((message) => message.type === "tool")?.content).toBe(
      "booked attention on 2026-12-24 (note: none)",
    );
    expect(fake!.pending()).toBe(0);
  }, 180_000);
});
