/**
 * The page signs in with the organization's identity provider: a real
 * `oidc-provider` on a loopback port, its own login and consent pages, the
 * page as a public client (authorization code + PKCE, openid-client in the
 * browser). Alice asks for a study plan; rita, a reviewer only because her
 * IdP group `study-reviewers` maps to that role, approves it from her inbox;
 * the events are created once, for alice. Then sign-out ends the provider's
 * session too, and an expired token brings back "Sign in again".
 */
import type { Page } from "playwright-core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRulesPlanner } from "../../src/domains/rules-planner.js";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser, type TestBrowser } from "./support/browser.js";
import { groupsMapping, writeOidcConfig } from "./support/oidc-config.js";
import { startTestProvider, type TestProvider } from "./support/oidc-provider.js";
import { startTestServer, type TestServer } from "./support/server.js";

const STUDY_REQUEST =
  "Use my notes to plan 120 minutes of attention study over 3 days, at most 60 minutes a day, " +
  "starting 2026-12-02 at 18:00 UTC, and put it in my calendar";

let provider: TestProvider;
let server: TestServer;
let browser: TestBrowser | undefined;
/** Rita's own browser: the provider's session cookie is per browser, as it is per person. */
let ritaBrowser: TestBrowser | undefined;
let config: Awaited<ReturnType<typeof writeOidcConfig>>;

/** Signs in through the provider's own login and consent pages. */
async function signInWithProvider(page: Page, login: string): Promise<void> {
  await page.goto(server.url);
  await page.getByRole("button", { name: /^Sign in with 127\.0\.0\.1/ }).click();
  await page.locator('input[name="login"]').waitFor({ timeout: 30_000 });
  expect(page.url().startsWith(provider.issuer)).toBe(true);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("any password");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
  await expect.poll(() => page.getByTestId("signed-in-as").textContent(), { timeout: 30_000 }).toContain(login);
  // The code left the address bar; the token is the provider's, in this tab only.
  expect(new URL(page.url()).searchParams.has("code")).toBe(false);
}

describe.runIf(BROWSER_TESTS_RUN)("the page signs in with an OpenID provider", () => {
  beforeAll(async () => {
    buildPage();
    provider = await startTestProvider({
      audience: "warrant-api",
      accounts: {
        alice: { groups: ["study-students"], name: "alice" },
        rita: { groups: ["study-reviewers"], name: "rita" },
      },
    });
    // No clock skew: the expiry test waits out a one-second token.
    config = await writeOidcConfig({ issuers: [groupsMapping(provider.issuer, { clock_skew_seconds: 0 })] });
    server = await startTestServer({ planner: createRulesPlanner(), settings: { WARRANT_CONFIG: config.path } });
    provider.allowRedirect(`${server.url}/`);
    browser = await launchBrowser();
    ritaBrowser = await launchBrowser();
  }, 180_000);
  afterAll(async () => {
    try {
      await browser?.close();
      await ritaBrowser?.close();
    } finally {
      await server?.close();
      await provider?.close();
      await config?.remove();
    }
  });

  it("alice plans her study, rita (mapped from her group) approves, the events are alice's, once", async () => {
    const before = ((await server.calendarEvents()) as Array<{ event_id: string }>).map((event) => event.event_id);
    const alice = await browser!.page();
    await signInWithProvider(alice, "alice");
    await alice.getByLabel("Your message").fill(STUDY_REQUEST);
    await alice.getByLabel("Your message").press("Enter");
    await alice.getByRole("region", { name: /Review needed: 3 actions/ }).waitFor({ timeout: 60_000 });

    const rita = await ritaBrowser!.page();
    await signInWithProvider(rita, "rita");
    await rita.getByRole("button", { name: "Reviews", exact: true }).click();
    await rita.locator("ul.reviews button", { hasText: "alice:" }).first().click();
    await rita.getByRole("region", { name: /Review needed: 3 actions/ }).waitFor({ timeout: 30_000 });
    await rita.getByRole("button", { name: "Approve all" }).click();
    await rita.getByRole("button", { name: "Send decisions" }).click();
    await expect
      .poll(() => rita.getByTestId("review-outcome").getAttribute("data-status"), { timeout: 60_000 })
      .toBe("completed");
    const created = ((await server.calendarEvents()) as Array<{ event_id: string; user_id: string }>).filter(
      (event) => !before.includes(event.event_id),
    );
    expect(created).toHaveLength(3);
    expect(created.every((event) => event.user_id === "alice")).toBe(true);
    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    try {
      const approvals = await client.query("select distinct approver, owner from warrant.approvals");
      expect(approvals.rows).toEqual([{ approver: "rita", owner: "alice" }]);
    } finally {
      await client.end();
    }
    await browser!.screenshot(rita, "oidc-reviewer-approved");
    await alice.close();

    // Sign-out ends the provider's session too: the next sign-in asks for the login again.
    await rita.getByRole("button", { name: /Sign out/ }).click();
    await rita.getByRole("button", { name: "Yes, sign me out" }).click();
    await rita.getByRole("button", { name: /^Sign in with 127\.0\.0\.1/ }).waitFor({ timeout: 30_000 });
    await rita.getByRole("button", { name: /^Sign in with 127\.0\.0\.1/ }).click();
    await rita.locator('input[name="login"]').waitFor({ timeout: 30_000 });
    await rita.close();
  }, 180_000);

  it("an expired token brings the user back to a clear 'Sign in again' with the provider", async () => {
    const page = await browser!.page();
    const expired = await provider.accessToken("alice", { ttlSeconds: 1 });
    await page.goto(server.url);
    await page.evaluate((token) => sessionStorage.setItem("warrant.token", token), expired);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    await page.reload();
    const signInAgain = page.getByRole("button", { name: /^Sign in again with 127\.0\.0\.1/ });
    await signInAgain.waitFor({ timeout: 30_000 });
    expect(await signInAgain.count()).toBe(1);
    expect(await signInAgain.isEnabled()).toBe(true);
    await page.close();
  }, 60_000);
});
