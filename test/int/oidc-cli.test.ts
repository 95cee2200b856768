/**
 * The CLI signs in with the identity provider through the device
 * authorization grant (`npm run token -- --device`) against a real
 * `oidc-provider`: the CLI prints where to confirm, the user confirms the
 * code, logs in and consents in a browser, and the CLI prints the provider's
 * token, which Warrant's verifier (the same one the server runs) maps to
 * rita the reviewer. A provider without the grant is a clear refusal.
 */
import { spawn } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { tokenVerifier } from "../../src/auth/token-verifier.js";
import { REPO_ROOT } from "../../src/env.js";
import { loadConfig } from "../../src/policy/config.js";
import { BROWSER_TESTS_RUN, launchBrowser, type TestBrowser } from "./support/browser.js";
import { groupsMapping, writeOidcConfig } from "./support/oidc-config.js";
import { startTestProvider, type TestProvider } from "./support/oidc-provider.js";

let provider: TestProvider;
let noDevice: TestProvider;
let config: Awaited<ReturnType<typeof writeOidcConfig>>;
let noDeviceConfig: Awaited<ReturnType<typeof writeOidcConfig>>;
let browser: TestBrowser | undefined;

function runToken(args: string[], configPath: string) {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/token.ts", ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, WARRANT_CONFIG: configPath },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const prompted = new Promise<string>((resolve) => {
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const url = /\(or open (\S+)\)/.exec(stderr)?.[1];
      if (url) resolve(url);
    });
  });
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, stdout, stderr })),
  );
  return { prompted, exited, kill: () => child.kill() };
}

describe.runIf(BROWSER_TESTS_RUN)("the CLI's device sign-in", () => {
  const fixture = useSandbox();
  beforeAll(async () => {
    provider = fixture.add(
      await startTestProvider({
        audience: "warrant-api",
        accounts: { rita: { groups: ["study-reviewers"], name: "Rita" } },
      }),
    );
    noDevice = fixture.add(await startTestProvider({ audience: "warrant-api", accounts: {}, deviceFlow: false }));
    config = fixture.add(await writeOidcConfig({ issuers: [groupsMapping(provider.issuer)] }));
    noDeviceConfig = fixture.add(await writeOidcConfig({ issuers: [groupsMapping(noDevice.issuer)] }));
    browser = fixture.add(await launchBrowser());
  }, 120_000);

  it("prints where to confirm, and after login and consent the provider's token for rita the reviewer", async () => {
    const run = runToken(["--device"], config.path);
    try {
      const url = await run.prompted;
      expect(url.startsWith(`${provider.issuer}/device`)).toBe(true);
      const page = await browser!.page();
      await page.goto(url);
      // The provider asks to confirm the code shown by the CLI, then for the login and the consent.
      await page.getByRole("button", { name: "Continue" }).click();
      await page.locator('input[name="login"]').fill("rita");
      await page.locator('input[name="password"]').fill("any password");
      await page.getByRole("button", { name: "Sign-in" }).click();
      await page.getByRole("button", { name: "Continue" }).click();
      const { code, stdout } = await run.exited;
      expect(code).toBe(0);
      const token = stdout.trim().split("\n").at(-1) ?? "";
      const verified = await tokenVerifier({
        secret: new Uint8Array(32),
        oidc: (await loadConfig(config.path)).auth.oidc,
      }).verify(token);
      expect(verified).toMatchObject({
        ok: true,
        principal: { user_id: "rita", tenant: "uni", role: "reviewer", scopes: ["notes:read", "approvals:decide"] },
        source: { issuer: provider.issuer },
      });
      await page.close();
    } finally {
      run.kill();
    }
  }, 120_000);

  it("a provider without the device grant is a clear refusal (exit 1, unsupported), no token", async () => {
    const { code, stdout, stderr } = await runToken(["--device"], noDeviceConfig.path).exited;
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain("warrant: unsupported:");
  }, 60_000);

  it("refuses mixed or unknown options with usage (exit 2)", async () => {
    for (const args of [
      ["--device", "--user", "alice"],
      ["--device", "--ttl", "60"],
      ["--issuer", provider.issuer],
    ]) {
      const { code, stdout } = await runToken(args, config.path).exited;
      expect(code, args.join(" ")).toBe(2);
      expect(stdout).toBe("");
    }
    const unknown = await runToken(["--device", "--issuer", "https://idp.example.com"], config.path).exited;
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("warrant: unsupported:");
  }, 60_000);
});
