/**
 * The page's routes on a real server process (no browser needed): the page
 * and its assets load without a token while the API still needs one; the
 * dev sign-in routes exist only on the shipped dev principal directory (and a
 * loopback HOST: test/int/deploy-security.test.ts);
 * `/ui/session` tells the page who the token is, the budgets and the tool schemas.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { shippedPrincipalsPath } from "../../src/server/web.js";
import { buildPage } from "./support/browser.js";
import { createServerSandbox, type ServerSandbox } from "./support/server-process.js";

let sandbox: ServerSandbox | undefined;

beforeAll(() => buildPage(), 120_000);
afterEach(async () => {
  await sandbox?.cleanup();
  sandbox = undefined;
});

describe("chat page routes", () => {
  it("serves the page and its assets without a token; the API and /ui/session still need one", async () => {
    sandbox = await createServerSandbox();
    const server = await sandbox.start();

    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await page.text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${server.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toMatch(/^text\/javascript/);

    // Only built asset names are served: no traversal, no other files.
    for (const probe of ["/assets/..%2Fpackage.json", "/assets/nothing.js", "/assets/.env"]) {
      const answer = await fetch(`${server.url}${probe}`);
      expect(answer.status, probe).toBe(404);
    }
    for (const route of ["/threads/search", "/ui/session"]) {
      const answer = await fetch(`${server.url}${route}`, { method: route === "/threads/search" ? "POST" : "GET" });
      expect(answer.status, route).toBe(401);
      expect(((await answer.json()) as { error: string }).error).toBe("token_missing");
    }

    const session = await sandbox.fetch(server, "/ui/session", { user: "alice" });
    expect(session.status).toBe(200);
    const body = (await session.json()) as {
      principal: { user_id: string };
      budgets: Record<string, number>;
      tools: { name: string; risk: string; schema: { properties: Record<string, unknown> } }[];
    };
    expect(body.principal.user_id).toBe("alice");
    expect(body.budgets).toMatchObject({ model_turns: 8, tool_calls: 12, tokens: 200_000 });
    const create = body.tools.find((tool) => tool.name === "create_study_event");
    expect(create?.risk).toBe("write_reversible");
    // The schema the model sees: host-injected arguments are not the reviewer's to edit.
    expect(Object.keys(create?.schema.properties ?? {}).sort()).toEqual([
      "calendar",
      "description",
      "end",
      "start",
      "timezone",
      "title",
    ]);
    // Tools outside the principal's scopes are not described to it.
    expect(body.tools.map((tool) => tool.name)).not.toContain("get_case_snapshot");
    // A reviewer edits other users' actions, so gets those tools' schemas without their scopes.
    const reviewer = (await (await sandbox.fetch(server, "/ui/session", { user: "rita" })).json()) as typeof body;
    expect(reviewer.tools.map((tool) => tool.name)).toContain("create_study_event");
  }, 120_000);

  it("on the shipped dev principals: lists them and mints a working token for one", async () => {
    sandbox = await createServerSandbox();
    const server = await sandbox.start();

    const listed = await fetch(`${server.url}/dev/principals`);
    expect(listed.status).toBe(200);
    expect(
      ((await listed.json()) as { principals: { user_id: string }[] }).principals.map((principal) => principal.user_id),
    ).toContain("alice");
    expect(await (await fetch(`${server.url}/ui/sign-in`)).json()).toEqual({ dev_login: true });

    const minted = await fetch(`${server.url}/dev/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user: "alice" }),
    });
    expect(minted.status).toBe(200);
    const { token } = (await minted.json()) as { token: string };
    const session = await fetch(`${server.url}/ui/session`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await session.json()) as { principal: { user_id: string } }).principal.user_id).toBe("alice");

    const unknown = await fetch(`${server.url}/dev/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user: "__proto__" }),
    });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toBe("principal_unknown");
    const malformed = await fetch(`${server.url}/dev/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(malformed.status).toBe(400);
  }, 120_000);

  it("on any other principal directory the dev routes do not exist (404 before any token check)", async () => {
    sandbox = await createServerSandbox();
    // The same principals under another path: not the shipped directory, so no dev sign-in.
    const copy = path.join(sandbox.dataDir, "principals.json");
    await fs.copyFile(shippedPrincipalsPath(), copy);
    const server = await sandbox.start({ WARRANT_PRINCIPALS: copy });

    const anonymous = await fetch(`${server.url}/dev/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ user: "alice" }),
    });
    expect(anonymous.status).toBe(404);
    expect(await (await fetch(`${server.url}/ui/sign-in`)).json()).toEqual({ dev_login: false });
    const signedIn = await sandbox.fetch(server, "/dev/token", {
      method: "POST",
      user: "alice",
      body: JSON.stringify({ user: "alice" }),
    });
    expect(signedIn.status).toBe(404);
    expect(((await signedIn.json()) as { error: string }).error).toBe("not_found");
    const listed = await sandbox.fetch(server, "/dev/principals", { user: "alice" });
    expect(listed.status).toBe(404);
    // The page itself is still served.
    expect((await fetch(`${server.url}/`)).status).toBe(200);
  }, 120_000);
});
