/**
 * Headless Chromium for the browser tests: Debian's `/usr/bin/chromium`
 * driven by `playwright-core` (no browser download). Under `CI=true` the
 * tests are required (a missing Chromium fails them); elsewhere they are
 * skipped with a notice on stderr.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { expect } from "vitest";
import { REPO_ROOT } from "../../../src/env.js";

export const CHROMIUM_PATH = "/usr/bin/chromium";
/** Screenshots land here (git-ignored). */
export const SCREENSHOT_DIR = path.join(REPO_ROOT, "test-output", "browser");

const REQUIRED = process.env["CI"] === "true";
/** Whether the browser suites run: always under CI, else only where Chromium exists. */
export const BROWSER_TESTS_RUN = REQUIRED || existsSync(CHROMIUM_PATH);
if (!BROWSER_TESTS_RUN) {
  process.stderr.write(
    `\n  NOTICE: browser tests skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium). ` +
      "Under CI=true they are required.\n\n",
  );
}

// Flags that keep Chromium from reaching for the network (there is none here) or a GPU.
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

export interface TestBrowser {
  /** A new tab; each tab has its own sessionStorage, so its own signed-in user. */
  page(options?: { width?: number; height?: number }): Promise<Page>;
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

/** Builds the page if it is missing or stale (the same step `npm start` runs). */
export function buildPage(): void {
  execFileSync(process.execPath, ["scripts/build-web.mjs"], { cwd: REPO_ROOT, stdio: ["ignore", "ignore", "inherit"] });
}

export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`browser tests need Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium`);
  const userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-chromium-"));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1100, height: 900 },
      timeout: 60_000,
    });
  } catch (error) {
    await fs.rm(userDataDir, { recursive: true, force: true });
    throw error;
  }
  context.setDefaultTimeout(20_000);
  await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
  return {
    async page(options = {}) {
      const page = await context.newPage();
      if (options.width) await page.setViewportSize({ width: options.width, height: options.height ?? 800 });
      return page;
    },
    async screenshot(page, name) {
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
    },
    async close() {
      try {
        await context.close();
      } finally {
        await fs.rm(userDataDir, { recursive: true, force: true });
      }
    },
  };
}

/** Signs in on the page's dev principal picker as `name` (its display name) and waits until the page says so. */
export async function signInAs(page: Page, url: string, name: string): Promise<void> {
  await page.goto(url);
  await page.getByRole("button", { name: new RegExp(`^${name}\\b`) }).click();
  await expect.poll(() => page.getByTestId("signed-in-as").textContent()).toContain(name);
}
