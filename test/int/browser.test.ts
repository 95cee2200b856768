/**
 * The chat page in headless Chromium against a real server process on real
 * Postgres (rules planner): sign in as alice, a cited answer whose citation
 * opens its excerpt, the thread kept across a reload, a bad token's sign-in
 * error, the page at 375 px; an expired token sends the user back to sign
 * in; a server that went away offers a retry that works once it is back; a
 * reload in the middle of a run neither cancels it nor loses it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { mintApiToken } from "../../src/auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory } from "../../src/auth/principal.js";
import { shippedPrincipalsPath } from "../../src/server/web.js";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser, type TestBrowser, signInAs } from "./support/browser.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";
import { freePort } from "../support/ports.js";

const QUESTION = "Compare self-attention with cross-attention using my notes";

let sandbox: ServerSandbox | undefined;
let server: ServerProcess;
let browser: TestBrowser | undefined;

describe.runIf(BROWSER_TESTS_RUN)("chat page in Chromium", () => {
  const fixture = useSandbox();
  beforeAll(async () => {
    buildPage();
    sandbox = fixture.add(await createServerSandbox());
    server = await sandbox.start();
    browser = fixture.add(await launchBrowser());
  }, 180_000);

  it("alice signs in, gets a cited answer whose citation opens its excerpt, and finds the thread after a reload", async () => {
    const page = await browser!.page();
    await signInAs(page, server.url, "Alice");

    await page.getByLabel("Your message").fill(QUESTION);
    await page.getByLabel("Your message").press("Enter");
    const answer = page.getByTestId("answer");
    await answer.waitFor({ timeout: 60_000 });
    await expect
      .poll(() => page.getByTestId("termination").getAttribute("data-code"), { timeout: 30_000 })
      .toBe("final_answer");

    // The run's ledger: the notes tools ran and succeeded.
    const ledger = page.getByRole("region", { name: "Tool ledger" });
    await expect.poll(() => ledger.locator("li[data-status]").count()).toBeGreaterThanOrEqual(2);
    const statuses = await ledger
      .locator("li[data-status]")
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-status")));
    expect(new Set(statuses)).toEqual(new Set(["succeeded"]));
    await expect.poll(() => page.getByRole("region", { name: "Budgets" }).locator("dl > div").count()).toBe(4);

    // A numbered citation opens the cited excerpt with its source and version.
    const sources = answer.getByRole("list", { name: "Sources" }).getByRole("listitem");
    expect(await sources.count()).toBeGreaterThanOrEqual(1);
    await answer.getByRole("button", { name: "Citation 1: open the excerpt" }).first().click();
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    expect((await dialog.getByTestId("excerpt-text").textContent())?.length ?? 0).toBeGreaterThan(20);
    expect(await dialog.getByTestId("excerpt-text").textContent()).not.toContain("not in this thread's evidence");
    expect(await dialog.getByTestId("excerpt-source").textContent()).toMatch(/\S/);
    expect(await dialog.getByTestId("excerpt-version").textContent()).not.toBe("unknown");
    await browser!.screenshot(page, "cited-answer-excerpt");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });

    // The thread id is in the URL; a reload reopens the thread, and the list shows it as current.
    const threadId = new URL(page.url()).searchParams.get("thread");
    expect(threadId).toMatch(/^[0-9a-f-]{36}$/);
    await page.reload();
    await page.getByTestId("answer").waitFor();
    const current = page
      .getByRole("navigation", { name: "Your conversations" })
      .locator(`[data-thread-id="${threadId}"]`);
    await current.waitFor();
    expect(await current.getAttribute("aria-current")).toBe("page");
    // A long title is shortened in the list; its full text is the tooltip.
    expect(await current.locator("span[title]").getAttribute("title")).toBe(QUESTION);
    await browser!.screenshot(page, "thread-after-reload");
    await page.close();
  }, 120_000);

  it("a bad token shows the sign-in error and no chat", async () => {
    const page = await browser!.page();
    await page.goto(server.url);
    // Well-formed, but signed with a secret the server does not have.
    const forged = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW9mLW5vYm9keS1hdC1hbGw";
    await page.getByLabel("API token").fill(forged);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.getAttribute("data-code")).toBe("token_invalid");
    expect(await page.getByLabel("API token").isVisible()).toBe(true);
    expect(await page.getByLabel("Your message").count()).toBe(0);
    await browser!.screenshot(page, "bad-token");

    await page.getByLabel("API token").fill("not-a-token");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect.poll(() => page.getByRole("alert").getAttribute("data-code")).toBe("token_malformed");
    await page.close();
  }, 60_000);

  it("is usable at 375 px: nothing wider than the screen, the composer in reach", async () => {
    const page = await browser!.page({ width: 375, height: 740 });
    await signInAs(page, server.url, "Alice");
    await page.getByLabel("Your message").fill(QUESTION);
    await page.getByRole("button", { name: "Send" }).click();
    await page.getByTestId("answer").waitFor({ timeout: 60_000 });
    await expect
      .poll(() => page.getByTestId("termination").getAttribute("data-code"), { timeout: 30_000 })
      .toBe("final_answer");
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(375);
    await browser!.screenshot(page, "narrow-375");
    await page.close();
  }, 120_000);
});

/** A port nobody listens on right now, so a server can be stopped and started again on it. */

/** A token for `user` signed with the sandbox's secret, living `ttlSeconds` from `now`. */
async function tokenFor(
  box: ServerSandbox,
  user: string,
  options: { ttlSeconds: number; now?: number },
): Promise<string> {
  const secret = Uint8Array.from(Buffer.from(box.env()["WARRANT_AUTH_SECRET"]!, "hex"));
  const principal = findPrincipal(await loadPrincipalDirectory(shippedPrincipalsPath()), user);
  return mintApiToken(secret, principal, options);
}

describe.runIf(BROWSER_TESTS_RUN)("chat page error states in Chromium", () => {
  let box: ServerSandbox | undefined;
  let tab: TestBrowser | undefined;
  beforeAll(async () => {
    buildPage();
    tab = await launchBrowser();
  }, 240_000); // two server starts on a loaded 2-core machine
  afterEach(async () => {
    await box?.cleanup();
    box = undefined;
  });
  afterAll(async () => {
    await tab?.close();
  });

  it("an expired token sends the user back to sign in, on load and in the middle of a session", async () => {
    box = await createServerSandbox();
    const running = await box.start();

    // Stored from an earlier visit, expired since: the page opens on the sign-in form.
    const stale = await tokenFor(box, "alice", { ttlSeconds: 60, now: Date.now() - 3_600_000 });
    const page = await tab!.page();
    await page.addInitScript((token) => window.sessionStorage.setItem("warrant.token", token), stale);
    await page.goto(running.url);
    await expect.poll(() => page.getByRole("alert").getAttribute("data-code")).toBe("token_expired");
    expect(await page.getByLabel("API token").isVisible()).toBe(true);
    await page.close();

    // Valid at sign-in, expired (with the server's 5 s clock skew) before the next request.
    const short = await tokenFor(box, "alice", { ttlSeconds: 1 });
    const live = await tab!.page();
    await live.goto(running.url);
    await live.getByLabel("API token").fill(short);
    await live.getByRole("button", { name: "Sign in", exact: true }).click();
    await live.getByLabel("Your message").waitFor();
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    await live.getByLabel("Your message").fill(QUESTION);
    await live.getByLabel("Your message").press("Enter");
    await expect
      .poll(() => live.getByRole("alert").getAttribute("data-code"), { timeout: 20_000 })
      .toBe("token_expired");
    expect(await live.getByRole("alert").textContent()).toContain("Sign in again");
    expect(await live.getByLabel("API token").isVisible()).toBe(true);
    await tab!.screenshot(live, "expired-token");
    await live.close();
  }, 240_000); // two server starts on a loaded 2-core machine

  it("server down: the page says so and Retry sends the message once the server is back", async () => {
    box = await createServerSandbox();
    const port = String(await freePort());
    const first = await box.start({ PORT: port });
    const page = await tab!.page();
    await signInAs(page, first.url, "Alice");

    await first.kill();
    await page.getByLabel("Your message").fill(QUESTION);
    await page.getByLabel("Your message").press("Enter");
    await expect
      .poll(() => page.getByRole("alert").getAttribute("data-code"), { timeout: 20_000 })
      .toBe("server_unreachable");
    await tab!.screenshot(page, "server-down");

    await box.start({ PORT: port });
    await page.getByRole("button", { name: "Retry" }).click();
    await page.getByTestId("answer").waitFor({ timeout: 60_000 });
    await expect
      .poll(() => page.getByTestId("termination").getAttribute("data-code"), { timeout: 30_000 })
      .toBe("final_answer");
    expect(await page.getByRole("alert").count()).toBe(0);
    await page.close();
  }, 240_000); // two server starts on a loaded 2-core machine

  it("a reload in the middle of a run neither cancels it nor loses it: the page joins it again", async () => {
    box = await createServerSandbox();
    // Slow reads, so the run is still going when the page reloads.
    const slow = await box.start({ WARRANT_NOTES_DELAY_MS: "2500" });
    const page = await tab!.page();
    await signInAs(page, slow.url, "Alice");
    await page.getByLabel("Your message").fill(QUESTION);
    await page.getByLabel("Your message").press("Enter");
    await page.getByRole("status").filter({ hasText: "Working" }).waitFor();
    await expect
      .poll(() => new URL(page.url()).searchParams.get("thread"), { timeout: 20_000 })
      .toMatch(/^[0-9a-f-]{36}$/);
    const threadId = new URL(page.url()).searchParams.get("thread")!;
    await page.reload();
    // No click: the page finds the running run and follows it to its end.
    await page.getByTestId("answer").waitFor({ timeout: 60_000 });
    await expect
      .poll(() => page.getByTestId("termination").getAttribute("data-code"), { timeout: 30_000 })
      .toBe("final_answer");
    const alice = await box.client(slow, "alice");
    expect((await alice.runs.list(threadId)).map((run) => run.status)).toEqual(["success"]);
    await page.close();
  }, 240_000);
});
