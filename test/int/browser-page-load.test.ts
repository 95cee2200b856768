/**
 * Loading the chat page asks nothing it is refused: no 401 (or other
 * failed request) and no console error, signed out, while signing in, and on
 * a reload signed in (issue 22: "a 401 is logged on every page load").
 * Headless Chromium against a real server process.
 */
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser, type TestBrowser } from "./support/browser.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";

let sandbox: ServerSandbox | undefined;
let server: ServerProcess;
let browser: TestBrowser | undefined;

/** Every response of 400 or more, and every console error, the page saw. */
function watch(page: Page): { failures: string[] } {
  const failures: string[] = [];
  page.on("response", (response) => {
    if (response.status() >= 400) failures.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  page.on("console", (message) => {
    if (message.type() === "error") failures.push(`console: ${message.text()}`);
  });
  return { failures };
}

describe.runIf(BROWSER_TESTS_RUN)("a page load", () => {
  const fixture = useSandbox();
  beforeAll(async () => {
    buildPage();
    sandbox = fixture.add(await createServerSandbox());
    server = await sandbox.start();
    browser = fixture.add(await launchBrowser());
  }, 180_000);

  it("is refused nothing: signed out, signing in, and reloading signed in", async () => {
    const page = await browser!.page();
    const seen = watch(page);
    await page.goto(server.url);
    await page.getByRole("button", { name: /^Alice\b/ }).click();
    await expect.poll(() => page.getByTestId("signed-in-as").textContent()).toContain("Alice");
    await page.reload();
    await expect.poll(() => page.getByTestId("signed-in-as").textContent()).toContain("Alice");
    // Let late requests (icons, the inbox, the thread list) land.
    await page.waitForLoadState("networkidle");
    expect(seen.failures).toEqual([]);
    await page.close();
  }, 120_000);
});
