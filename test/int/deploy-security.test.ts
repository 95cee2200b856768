/**
 * Issue 21 (items 1–2) against `npm start` processes: the dev sign-in is
 * served only on a loopback HOST or with WARRANT_DEV_LOGIN=1 (then with a
 * warning); a user removed from the principal directory is refused at the
 * next request and their approved write is never executed; a revoked token
 * (`npm run token -- --revoke <jti>`) and a revoked user (`--revoke-user`)
 * are refused by two instances on one Postgres within the bound (5 s).
 */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { REPO_ROOT } from "../../src/env.js";
import { shippedPrincipalsPath } from "../../src/server/web.js";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedCompletion } from "./support/fake-openai.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";
import { BOOKING_REQUEST } from "./support/server.js";
import { fetchAs } from "./support/http.js";
import { BROWSER_TESTS_RUN, buildPage, launchBrowser } from "./support/browser.js";

const run = promisify(execFile);
/** The most a revocation may take to be honoured by every instance (issue 21). */
const REVOCATION_BOUND_MS = 5_000;

let sandbox: ServerSandbox | undefined;
let fake: FakeOpenAI | undefined;
const fixture = useSandbox("each");

const devToken = (server: ServerProcess) =>
  fetch(`${server.url}/dev/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user: "rita" }),
  });

const errorOf = async (response: Response) => ((await response.json()) as { error?: string }).error;

/** `npm run -s token -- ...args` on the sandbox's database and secret. */
async function tokenCli(box: ServerSandbox, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run("npm", ["run", "-s", "token", "--", ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...box.env() },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Status of an authenticated request with `token` on `server`. */
async function statusWith(server: ServerProcess, token: string): Promise<{ status: number; error?: string }> {
  const response = await fetchAs(`${server.url}/threads/search`, { method: "POST", body: "{}" }, token);
  const body = (await response.json()) as unknown;
  return {
    status: response.status,
    ...(Array.isArray(body) ? {} : { error: (body as { error?: string }).error }),
  };
}

/** Polls both instances until each refuses `token` with `code`; returns how long after `since` the slower one did. */
async function refusedEverywhere(servers: ServerProcess[], token: string, code: string, since: number) {
  const refusedAt = new Map<ServerProcess, number>();
  while (refusedAt.size < servers.length) {
    for (const server of servers) {
      if (refusedAt.has(server)) continue;
      const answer = await statusWith(server, token);
      if (answer.status === 401) {
        expect(answer.error).toBe(code);
        refusedAt.set(server, Date.now());
      } else expect(answer.status).toBe(200);
    }
    if (Date.now() - since > 2 * REVOCATION_BOUND_MS) break;
    await sleep(25);
  }
  expect(refusedAt.size).toBe(servers.length);
  return Math.max(...refusedAt.values()) - since;
}

describe("dev sign-in: only where it is safe", () => {
  it("HOST=0.0.0.0 → /dev/token and /dev/principals are 404 and the page is told so; the API still works", async () => {
    sandbox = fixture.add(await createServerSandbox());
    const server = await sandbox.start({ HOST: "0.0.0.0" });
    expect(server.stderr()).not.toContain("WARRANT_DEV_LOGIN");
    const minted = await devToken(server);
    expect(minted.status).toBe(404);
    expect(await errorOf(minted)).toBe("not_found");
    const listed = await fetch(`${server.url}/dev/principals`);
    expect(listed.status).toBe(404);
    expect(await (await fetch(`${server.url}/ui/sign-in`)).json()).toEqual({ dev_login: false });
    const session = await sandbox.fetch(server, "/ui/session", { user: "alice" });
    expect(session.status).toBe(200);

    // The page offers token sign-in only, and learns that without a 401 or a /dev/ request.
    if (!BROWSER_TESTS_RUN) return;
    buildPage();
    const browser = await launchBrowser();
    try {
      const page = await browser.page();
      const seen: { url: string; status: number }[] = [];
      page.on("response", (response) => seen.push({ url: response.url(), status: response.status() }));
      // The server listens on every interface; Chromium refuses to navigate to 0.0.0.0 itself.
      await page.goto(server.url.replace("0.0.0.0", "127.0.0.1"));
      await page.getByRole("button", { name: "Sign in", exact: true }).waitFor();
      await expect.poll(() => seen.some((entry) => entry.url.endsWith("/ui/sign-in"))).toBe(true);
      // Whatever the page would ask next (the dev principals) has been asked by then.
      await page.waitForLoadState("networkidle");
      expect(await page.getByRole("heading", { name: "Development sign-in" }).count()).toBe(0);
      expect(seen.filter((entry) => entry.status === 401 || entry.url.includes("/dev/"))).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 180_000);

  it("WARRANT_DEV_LOGIN=1 → served on 0.0.0.0 with a warning at start; WARRANT_DEV_LOGIN=0 → 404 even on loopback", async () => {
    sandbox = fixture.add(await createServerSandbox());
    const [open, closed] = await Promise.all([
      sandbox.start({ HOST: "0.0.0.0", WARRANT_DEV_LOGIN: "1" }),
      sandbox.start({ WARRANT_DEV_LOGIN: "0" }),
    ]);
    expect(open.stderr()).toMatch(/WARNING: WARRANT_DEV_LOGIN=1: anyone who can reach 0\.0\.0\.0 can mint a token/);
    const minted = await devToken(open);
    expect(minted.status).toBe(200);
    const { token } = (await minted.json()) as { token: string };
    const session = await fetchAs(`${open.url}/ui/session`, {}, token);
    expect(((await session.json()) as { principal: { user_id: string } }).principal.user_id).toBe("rita");
    expect(await (await fetch(`${open.url}/ui/sign-in`)).json()).toEqual({ dev_login: true });

    expect(closed.stderr()).not.toContain("WARRANT_DEV_LOGIN");
    expect((await devToken(closed)).status).toBe(404);
    expect(await (await fetch(`${closed.url}/ui/sign-in`)).json()).toEqual({ dev_login: false });
  }, 120_000);
});

describe("revocation", () => {
  it("a user removed from the directory is refused at the next request and their approved write never runs", async () => {
    fake = fixture.add(await startFakeOpenAI());
    sandbox = fixture.add(await createServerSandbox());
    const directoryPath = path.join(sandbox.dataDir, "principals.json");
    const shipped = JSON.parse(await fs.readFile(shippedPrincipalsPath(), "utf8")) as {
      principals: { user_id: string; tenant: string }[];
    };
    await fs.writeFile(directoryPath, JSON.stringify(shipped));
    const server = await sandbox.start({
      WARRANT_PRINCIPALS: directoryPath,
      WARRANT_PLANNER: "model",
      // A priced model name (the server refuses an unpriced one); the fake answers whatever the name.
      WARRANT_MODEL: "gpt-4o-mini",
      OPENAI_BASE_URL: fake.baseUrl,
    });
    const proposal: ScriptedCompletion = {
      kind: "completion",
      tool_calls: [
        {
          id: "call_book_1",
          name: "create_study_event",
          arguments: JSON.stringify({
            title: "Attention study block",
            start: "2026-12-01T18:00:00+01:00",
            end: "2026-12-01T19:00:00+01:00",
            timezone: "Europe/Berlin",
            calendar: "study",
          }),
        },
      ],
      finish_reason: "tool_calls",
      usage: { prompt_tokens: 50, completion_tokens: 20 },
    };
    fake.enqueue(proposal);
    const alice = await sandbox.client(server, "alice");
    const thread = await alice.threads.create();
    const waited = (await alice.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: BOOKING_REQUEST }] },
    })) as { __interrupt__?: unknown[] };
    expect(waited.__interrupt__).toHaveLength(1);
    expect((await sandbox.fetch(server, `/threads/${thread.thread_id}`, { user: "alice" })).status).toBe(200);

    // The operator removes alice from the directory file.
    await fs.writeFile(
      directoryPath,
      JSON.stringify({ principals: shipped.principals.filter((principal) => principal.user_id !== "alice") }),
    );
    const refused = await sandbox.fetch(server, `/threads/${thread.thread_id}`, { user: "alice" });
    expect(refused.status).toBe(401);
    expect(await errorOf(refused)).toBe("principal_revoked");

    // A reviewer approves her pending write: the run stops at the owner check, nothing is written.
    const decided = await sandbox.fetch(server, `/reviews/${thread.thread_id}`, {
      method: "POST",
      user: "rita",
      body: JSON.stringify({ decisions: [{ type: "approve" }] }),
    });
    expect(decided.status).toBe(200);
    const answer = (await decided.json()) as { run_status: string; error: { error: string } | null };
    expect(answer.run_status).toBe("error");
    expect(answer.error?.error).toBe("principal_revoked");
    expect(await sandbox.calendarEvents()).toHaveLength(0);

    // A tenant change counts as removal too: bob listed under another tenant is refused.
    await fs.writeFile(
      directoryPath,
      JSON.stringify({
        principals: shipped.principals.map((principal) =>
          principal.user_id === "bob" ? { ...principal, tenant: "acme" } : principal,
        ),
      }),
    );
    const moved = await sandbox.fetch(server, "/threads/search", { method: "POST", user: "bob", body: "{}" });
    expect(moved.status).toBe(401);
    expect(await errorOf(moved)).toBe("principal_revoked");
    // Restored to the directory, alice is served again (her old token is still valid and not revoked).
    await fs.writeFile(directoryPath, JSON.stringify(shipped));
    expect((await sandbox.fetch(server, `/threads/${thread.thread_id}`, { user: "alice" })).status).toBe(200);
    expect(await sandbox.calendarEvents()).toHaveLength(0);
    expect(fake.pending()).toBe(0);
  }, 180_000);

  it("--revoke <jti> and --revoke-user are honoured by two instances within 5 s", async () => {
    sandbox = fixture.add(await createServerSandbox());
    const [a, b] = await Promise.all([sandbox.start(), sandbox.start()]);
    const revoked = await sandbox.token("alice");
    const kept = await sandbox.token("alice");
    for (const server of [a, b]) {
      expect(await statusWith(server, revoked)).toEqual({ status: 200 });
    }

    const jti = String(decodeJwt(revoked).jti);
    const cli = await tokenCli(sandbox, ["--revoke", jti]);
    expect(cli).toMatchObject({ code: 0 });
    expect(cli.stdout).toContain(`revoked token ${jti}`);
    const tokenMs = await refusedEverywhere([a, b], revoked, "token_revoked", Date.now());
    expect(tokenMs).toBeLessThanOrEqual(REVOCATION_BOUND_MS);
    // Only that token: alice's other token still works on both.
    for (const server of [a, b]) expect(await statusWith(server, kept)).toEqual({ status: 200 });

    const bob = await sandbox.token("bob");
    const byUser = await tokenCli(sandbox, ["--revoke-user", "alice"]);
    expect(byUser).toMatchObject({ code: 0 });
    const userMs = await refusedEverywhere([a, b], kept, "token_revoked", Date.now());
    expect(userMs).toBeLessThanOrEqual(REVOCATION_BOUND_MS);
    for (const server of [a, b]) expect(await statusWith(server, bob)).toEqual({ status: 200 });
    // A token issued after the revocation (from the next second on) is served.
    await sleep(1_100);
    const fresh = await sandbox.token("alice");
    for (const server of [a, b]) expect(await statusWith(server, fresh)).toEqual({ status: 200 });
    console.log(`revocation honoured by both instances after ${tokenMs} ms (jti) and ${userMs} ms (user)`);
  }, 180_000);
});
