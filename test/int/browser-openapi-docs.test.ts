/**
 * `/docs` renders in Chromium with no network: every request that leaves the
 * loopback host fails the test. `/openapi.json` is served without a token,
 * is the document the page shows, and carries the page's strict CSP only on /docs.
 * Against the real server process.
 */
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { BROWSER_TESTS_RUN, launchBrowser, type TestBrowser } from "./support/browser.js";
import { createServerSandbox, type ServerProcess } from "./support/server-process.js";

// The real server process (app.ts registers the two routes before its token check; the rest of the API needs one).
const fixture = useSandbox();
let server: ServerProcess;
let browser: TestBrowser;

beforeAll(async () => {
  const sandbox = fixture.add(await createServerSandbox());
  server = await sandbox.start();
  if (BROWSER_TESTS_RUN) browser = fixture.add(await launchBrowser());
}, 180_000);

const local = (url: string) => ["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname);

/** Blocks (and remembers) every request that is not to the loopback host. */
async function offline(page: Page): Promise<string[]> {
  const outside: string[] = [];
  await page.route("**/*", async (route) => {
    const url = route.request().url();
    if (url.startsWith("data:") || local(url)) return route.continue();
    outside.push(url);
    return route.abort("internetdisconnected");
  });
  return outside;
}

describe("/openapi.json and /docs", () => {
  it("serves the document without a token; the API still needs one", async () => {
    const answer = await fetch(`${server.url}/openapi.json`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    const document = (await answer.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toContain("/reviews/{thread_id}");
    expect((await fetch(`${server.url}/threads/search`, { method: "POST" })).status).toBe(401);
    const page = await fetch(`${server.url}/docs`);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  it.skipIf(!BROWSER_TESTS_RUN)("renders every operation in Chromium with the network blocked", async () => {
    const page = await browser.page();
    const outside = await offline(page);
    const failed: string[] = [];
    page.on("requestfailed", (request) => failed.push(request.url()));
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    const response = await page.goto(`${server.url}/docs`, { waitUntil: "load" });
    expect(response?.status()).toBe(200);
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.values(document.paths).reduce((sum, item) => sum + Object.keys(item).length, 0);
    expect(await page.locator("section.op").count()).toBe(operations);
    await expect.poll(() => page.locator("h1").textContent()).toContain("Warrant API");
    expect(await page.locator('section.op code.path:text-is("/reviews/{thread_id}")').count()).toBe(2);
    // A schema opens in place (no script needed).
    await page.locator("section.op details summary").first().click();
    expect(await page.locator("section.op details[open] pre").first().isVisible()).toBe(true);
    await page.goto(`${server.url}/openapi.json`);
    expect(outside).toEqual([]);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
