/**
 * A server's request that the owner open a URL (URL-mode elicitation), in the
 * page (headless Chromium, real server process, real Postgres, the tests'
 * eliciting stdio server): the consent card shows the server, its message,
 * the host and the full URL as text; the page makes no request to that host
 * until the owner clicks "Open <host>", which opens it in a new window with
 * no opener and no referrer and tells the server `accept`; the server's
 * completion shows on the card. "Decline" tells it `decline` and nothing is
 * fetched.
 */
import type { Page, Request } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { finalReply, startModelServer } from "../support/scripted-model.js";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser, signInAs, type TestBrowser } from "./support/browser.js";
import { CONSENT_HOST } from "./support/consent-pages.js";
import { proposeConsentPage, writeElicitingConfig } from "./support/elicitation.js";
import type { FakeOpenAI } from "./support/fake-openai.js";
import type { ServerProcess, ServerSandbox } from "./support/server-process.js";

let sandbox: ServerSandbox | undefined;
let fake: FakeOpenAI | undefined;
let server: ServerProcess;
let browser: TestBrowser | undefined;

/** Every request any tab of the page's browser makes to the consent host (answered locally, never sent out). */
async function watchConsentHost(page: Page): Promise<Request[]> {
  const hits: Request[] = [];
  await page.context().route(
    (url) => url.hostname === CONSENT_HOST,
    async (route) => {
      hits.push(route.request());
      await route.fulfill({ status: 200, contentType: "text/html", body: "<p>consent page</p>" });
    },
  );
  return hits;
}

async function askToOpen(page: Page) {
  await signInAs(page, server.url, "Alice");
  await page.getByLabel("Your message").fill("Connect my calendar");
  await page.getByLabel("Your message").press("Enter");
  const card = page.getByRole("region", { name: "The booking server asks you to open a page" });
  await card.waitFor({ timeout: 60_000 });
  return card;
}

async function toolReply(page: Page): Promise<unknown> {
  await expect
    .poll(() => page.getByTestId("termination").getAttribute("data-code"), { timeout: 60_000 })
    .toBe("final_answer");
  const threadId = new URL(page.url()).searchParams.get("thread") ?? "";
  const client = await sandbox!.client(server, "alice");
  const state = await client.threads.getState(threadId);
  const messages = (state.values as { messages: { type: string; content: unknown }[] }).messages;
  return messages.find((message) => message.type === "tool")?.content;
}

describe.runIf(BROWSER_TESTS_RUN)("URL-mode elicitation in Chromium", () => {
  const fixture = useSandbox();
  beforeAll(async () => {
    buildPage();
    const directory = await fixture.tempDir("warrant-browser-elicitation-url-");
    ({
      fake,
      servers: sandbox,
      server,
    } = await startModelServer(fixture, { WARRANT_CONFIG: await writeElicitingConfig(directory, 120_000) }));
    browser = fixture.add(await launchBrowser());
  }, 180_000);

  it("the owner opens the host after reading it: no request before the click, accept, completed", async () => {
    fake!.enqueue(proposeConsentPage("good"), finalReply("Connected."));
    const page = await browser!.page();
    const hits = await watchConsentHost(page);
    const card = await askToOpen(page);
    expect(await card.getByTestId("url-host").textContent()).toBe(CONSENT_HOST);
    const url = (await card.getByTestId("url-full").textContent()) ?? "";
    expect(url).toMatch(new RegExp(`^https://${CONSENT_HOST}/connect\\?session=[0-9a-f-]{36}$`));
    expect(await card.locator(".elicitation-message").textContent()).toBe("Connect your calendar on our consent page.");
    // Nothing on the page points the browser at the URL: no link, image, frame; and nothing was fetched.
    expect(await page.locator(`[href*="${CONSENT_HOST}"], [src*="${CONSENT_HOST}"]`).count()).toBe(0);
    await page.waitForTimeout(500);
    expect(hits).toHaveLength(0);
    await browser!.screenshot(page, "elicitation-url-consent");

    const opened = page.context().waitForEvent("page");
    await card.getByRole("button", { name: `Open ${CONSENT_HOST}` }).click();
    const popup = await opened;
    await popup.waitForLoadState();
    expect(hits.map((request) => request.url())).toEqual([url]);
    expect(await hits[0]!.headerValue("referer")).toBeNull();
    expect(await popup.evaluate(() => window.opener)).toBeNull();
    await popup.close();

    expect(await toolReply(page)).toBe("consented: accept");
    await expect.poll(() => card.getAttribute("data-state"), { timeout: 20_000 }).toBe("completed");
    expect(fake!.pending()).toBe(0);
  }, 180_000);

  it("Decline tells the server decline and nothing is fetched", async () => {
    fake!.enqueue(proposeConsentPage("good"), finalReply("Not connected."));
    const page = await browser!.page();
    const hits = await watchConsentHost(page);
    const card = await askToOpen(page);
    await card.getByRole("button", { name: "Decline" }).click();
    expect(await toolReply(page)).toBe("not consented: decline");
    expect(await card.count()).toBe(0);
    expect(hits).toHaveLength(0);
    expect(fake!.pending()).toBe(0);
  }, 180_000);
});
