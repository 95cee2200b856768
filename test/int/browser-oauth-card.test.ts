/**
 * The "Connect <server>" card (issue 25 item 2, page half), in headless
 * Chromium against the real server process on real Postgres. The
 * `authorization_required` interrupt is built on another branch; until it is
 * merged, the test injects that interrupt value into the thread's state as
 * the page reads it (the server's own answer, with the interrupt added by
 * the test's route), and withdraws it as the OAuth callback would by
 * resuming the run. The card names the server, explains why, opens the
 * authorization URL in a new tab (an `http(s)` URL only: a `javascript:` one
 * gets no card) that starts with the page's sign-in and no opener, the composer is held, and when the page gets the focus back
 * after the owner authorized it reads the thread again and the card goes.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser, signInAs, type TestBrowser } from "./support/browser.js";
import { finalReply, startModelServer } from "../support/scripted-model.js";
import type { FakeOpenAI } from "./support/fake-openai.js";
import type { ServerProcess, ServerSandbox } from "./support/server-process.js";

let sandbox: ServerSandbox | undefined;
let fake: FakeOpenAI | undefined;
let server: ServerProcess;
let browser: TestBrowser | undefined;
let authorizationPage: Server | undefined;
let authorizationBase = "";
const authorizationHits: string[] = [];

function interruptValue(authorizationUrl: string) {
  const expiresAt = new Date(Date.now() + 10 * 60_000).toISOString();
  return {
    authorization_required: [
      { server: "tickets", authorization_url: authorizationUrl, expires_at: expiresAt, action_ids: ["action-1"] },
      // Hostile: not a web address, so never a link.
      { server: "evil", authorization_url: "javascript:alert(1)", expires_at: expiresAt, action_ids: ["action-2"] },
    ],
  };
}

describe.runIf(BROWSER_TESTS_RUN)("Connect <server> card in Chromium", () => {
  const fixture = useSandbox();
  beforeAll(async () => {
    buildPage();
    ({ fake, servers: sandbox, server } = await startModelServer(fixture));
    // The authorization server's page: it sends the browser back to the deployment at once, as a signed-in
    // user who consents would be sent. (To the chat page: the callback page is on the h25auth branch; it reads
    // the same sessionStorage token the chat page does.)
    authorizationPage = fixture.addServer(
      createServer((request, response) => {
        authorizationHits.push(request.url ?? "");
        if (!request.url?.startsWith("/authorize")) return void response.writeHead(404).end();
        response.writeHead(302, { location: `${server.url}/?returned=1` }).end();
      }),
    );
    await new Promise<void>((resolve) => authorizationPage?.listen(0, "127.0.0.1", resolve));
    authorizationBase = `http://127.0.0.1:${(authorizationPage.address() as AddressInfo).port}`;
    browser = fixture.add(await launchBrowser());
  }, 180_000);

  it("shows the card, opens the authorization page in a new tab, and reads the thread again on return", async () => {
    // A thread of alice's with a finished run: its state is real; the interrupt is added on the way to the page.
    fake!.enqueue(finalReply("Nothing to do."));
    const alice = await sandbox!.client(server, "alice");
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "List my tickets" }] },
    });
    const authorizationUrl = `${authorizationBase}/authorize?client_id=warrant&state=s1`;
    let waiting = true;
    let readsAfterReturn = 0;

    const page = await browser!.page();
    await page.route(
      (url) => url.pathname === `/threads/${thread.thread_id}/state` || url.pathname === `/threads/${thread.thread_id}`,
      async (route) => {
        if (route.request().method() !== "GET") return route.continue();
        const response = await route.fetch();
        const body = (await response.json()) as Record<string, unknown>;
        if (!waiting) {
          readsAfterReturn += 1;
          return route.fulfill({ response, json: body });
        }
        const interrupt = { id: "interrupt-1", value: interruptValue(authorizationUrl) };
        const injected = route.request().url().endsWith("/state")
          ? { ...body, next: ["execute"], tasks: [{ id: "task-1", name: "execute", interrupts: [interrupt] }] }
          : { ...body, status: "interrupted", interrupts: { "task-1": [interrupt] } };
        return route.fulfill({ response, json: injected });
      },
    );
    await signInAs(page, server.url, "Alice");
    await page.goto(`${server.url}/?thread=${thread.thread_id}`);

    const card = page.getByRole("region", { name: "Connect tickets" });
    await card.waitFor({ timeout: 60_000 });
    expect(await card.getByRole("heading").textContent()).toBe("Connect tickets");
    expect(await card.locator("p").first().textContent()).toBe(
      "Warrant needs your permission to use tickets on your behalf.",
    );
    const link = card.getByRole("link", { name: "Connect tickets" });
    expect(await link.getAttribute("href")).toBe(authorizationUrl);
    expect(await link.getAttribute("target")).toBe("_blank");
    expect(await link.getAttribute("rel")).toContain("noopener");
    // No link for a server whose URL is not a web address.
    expect(await page.getByRole("region", { name: "Connect evil" }).count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    // The run waits for the owner: nothing to send meanwhile.
    expect(await page.getByLabel("Your message").isDisabled()).toBe(true);
    await browser!.screenshot(page, "oauth-connect-card");

    // The owner opens the authorization server's page in a new tab.
    const [popup] = await Promise.all([page.waitForEvent("popup"), link.click()]);
    await expect.poll(() => popup.url(), { timeout: 20_000 }).toBe(`${server.url}/?returned=1`);
    expect(authorizationHits.filter((hit) => hit.startsWith("/authorize"))).toEqual([
      "/authorize?client_id=warrant&state=s1",
    ]);
    // Back on our origin, the tab holds alice's sign-in (it started with a copy of the chat tab's session, which
    // the callback page needs to post the code), and the other site had no opener to reach back with.
    await expect.poll(() => popup.getByTestId("signed-in-as").textContent(), { timeout: 20_000 }).toContain("Alice");
    expect(await popup.evaluate(() => window.opener === null)).toBe(true);
    expect(await card.getByRole("status").textContent()).toContain("once tickets is connected");

    // The callback resumed the run server-side (here: the interrupt is gone); back on the page, it reads the thread again.
    waiting = false;
    await popup.close();
    await page.bringToFront();
    await page.evaluate(() => window.dispatchEvent(new Event("focus")));
    await expect.poll(() => card.count(), { timeout: 20_000 }).toBe(0);
    expect(readsAfterReturn).toBeGreaterThanOrEqual(1);
    await expect.poll(() => page.getByLabel("Your message").isDisabled(), { timeout: 10_000 }).toBe(false);
    expect(fake!.pending()).toBe(0);
    // The page keeps polling until it closes: stop answering through the route first.
    await page.unrouteAll({ behavior: "ignoreErrors" });
  }, 180_000);
});
