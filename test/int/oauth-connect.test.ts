/**
 * `npm run tools -- connect SERVER` (issue 25): the deployment authorizes its
 * own listing identity at an authorization_code server, so a host with no
 * `authorize` hook (what `npm start` builds) lists the server's tools. The
 * test plays the operator: it reads the URL the CLI prints, follows it as a
 * consenting browser, and pastes the address it was sent back to.
 */
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { loadApiSecret } from "../../src/auth/api-token.js";
import { createOAuthTokenStore } from "../../src/stores/oauth-token-store.js";
import { REPO_ROOT } from "../../src/env.js";
import { HOST_OWNER } from "../../src/oauth/authorization.js";
import { connectTools } from "../../src/mcp/tool-host.js";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import { parseConfig } from "../../src/policy/config.js";
import { startOAuthServers, ticketsServer, WHOAMI_CONTRACT } from "./support/oauth-servers.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";

const fixture = useSandbox();
let test: TestDatabase;
let database: Database;
let dir: string;
let configPath: string;
let text: string;

beforeAll(async () => {
  const servers = fixture.add(await startOAuthServers());
  test = fixture.add(await createTestDatabase());
  dir = await fixture.tempDir("warrant-connect-");
  database = fixture.add(await openDatabase({ databaseUrl: test.url, dataDir: dir }));
  text = JSON.stringify({
    servers: {
      tickets: ticketsServer(servers.mcpUrl),
    },
    tools: { whoami: WHOAMI_CONTRACT },
  });
  configPath = path.join(dir, "warrant.config.json");
  await writeFile(configPath, text);
}, 60_000);

/** Runs `tools connect` and answers its prompt with what `answer` makes of the URL it printed. */
function connect(args: string[], answer: (url: string) => Promise<string>) {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/tools.ts", ...args], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: test.url,
      WARRANT_DATA_DIR: dir,
      WARRANT_CONFIG: configPath,
      WARRANT_AUTH_SECRET: "",
    },
  });
  let stdout = "";
  let stderr = "";
  let answered = false;
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
    const url = /^(http\S+)$/m.exec(stdout)?.[1];
    if (url && !answered) {
      answered = true;
      void answer(url).then((line) => child.stdin.end(`${line}\n`));
    }
  });
  child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, stderr })),
  );
}

/** Where a consenting browser is sent back to from `url`. */
async function callbackAddress(url: string): Promise<string> {
  const response = await fetch(url, { redirect: "manual" });
  await response.body?.cancel().catch(() => undefined);
  return new URL(response.headers.get("location") ?? "", url).href;
}

describe("tools connect", () => {
  it("a host without the hook cannot list the server before; a tampered or foreign address connects nothing", async () => {
    await expect(connectTools(parseConfig(text))).rejects.toMatchObject({ code: "mcp_start_failed" });
    const tampered = await connect(["connect", "tickets"], async (url) =>
      (await callbackAddress(url)).replace(/state=[^&]+/, "state=abc.def"),
    );
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain("invalid_state");
    const denied = await connect(
      ["connect", "tickets"],
      async () => "http://127.0.0.1:9/oauth/callback?error=access_denied",
    );
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain("authorization_denied");
  }, 120_000);

  it("connects the listing identity; then a host with no hook lists and calls nothing as the host", async () => {
    const done = await connect(["connect", "tickets"], callbackAddress);
    expect(done.stderr).toBe("then paste the address the browser was sent back to: ");
    expect(done.code).toBe(0);
    expect(done.stdout).toContain("tickets: connected for listing");
    const secret = await loadApiSecret({ configured: undefined, dataDir: dir });
    const store = createOAuthTokenStore(database.pool, database.schema, secret);
    expect((await store.load(HOST_OWNER, "tickets")).tokens?.access_token).toBeTruthy();
    const host = await connectTools(parseConfig(text), undefined, { oauth: { store } });
    try {
      expect(host.catalog().map((tool) => tool.name)).toContain("whoami");
      // alice holds nothing: her call is not made with the host's token.
      expect(await store.load("alice", "tickets")).toEqual({});
    } finally {
      await host.close();
    }
    const again = await connect(["connect", "tickets"], async () => "");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already connected");
  }, 120_000);

  it("usage and config errors: unknown server, no server, options", async () => {
    const unknown = await connect(["connect", "nope"], async () => "");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown_server");
    expect((await connect(["connect"], async () => "")).code).toBe(2);
    expect((await connect(["connect", "tickets", "--user", "alice"], async () => "")).code).toBe(2);
  }, 120_000);
});
