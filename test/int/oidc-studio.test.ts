/**
 * `npm run dev`'s custom auth (src/server/studio-auth.ts) verifies tokens
 * exactly as `npm start` does: a real `oidc-provider`'s token becomes the
 * mapped principal; a refused token is the same 401 code; an issuer whose
 * key set cannot be fetched is 503 `auth_unavailable`. (The whole
 * `npm run dev` process with dev tokens is studio.test.ts.)
 */
import { randomBytes } from "node:crypto";
import { HTTPException } from "@langchain/langgraph-sdk/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintApiToken } from "../../src/auth/api-token.js";
import { tokenVerifier } from "../../src/auth/token-verifier.js";
import { loadConfig } from "../../src/policy/config.js";
import { createStudioAuth } from "../../src/server/studio-auth.js";
import { groupsMapping, writeOidcConfig } from "./support/oidc-config.js";
import { startTestProvider, type TestProvider } from "./support/oidc-provider.js";

let provider: TestProvider;
let config: Awaited<ReturnType<typeof writeOidcConfig>>;
const secret = new Uint8Array(randomBytes(32));
let authenticate: (request: Request) => Promise<unknown>;

beforeAll(async () => {
  provider = await startTestProvider({
    audience: "warrant-api",
    accounts: { rita: { groups: ["study-reviewers"], name: "Rita" }, nobody: { groups: ["other"] } },
  });
  config = await writeOidcConfig({ issuers: [groupsMapping(provider.issuer)] });
  const oidc = (await loadConfig(config.path)).auth.oidc;
  const auth = createStudioAuth(async () => tokenVerifier({ secret, oidc }));
  const handler = auth["~handlerCache"].authenticate;
  if (!handler) throw new Error("the studio auth has no authenticate handler");
  authenticate = async (request) => handler(request as never);
}, 60_000);
afterAll(async () => {
  await provider?.close();
  await config?.remove();
});

const request = (token: string) =>
  new Request("http://127.0.0.1:2024/threads", { headers: { authorization: `Bearer ${token}` } });

async function refusal(token: string): Promise<{ status: number; code: string }> {
  try {
    await authenticate(request(token));
  } catch (error) {
    if (!(error instanceof HTTPException)) throw error;
    return { status: error.status, code: (JSON.parse(error.message) as { error: string }).error };
  }
  throw new Error("admitted");
}

describe("Studio's custom auth with an OpenID provider", () => {
  it("a provider's token becomes the mapped principal", async () => {
    expect(await authenticate(request(await provider.accessToken("rita")))).toMatchObject({
      user_id: "rita",
      tenant: "uni",
      role: "reviewer",
      identity: "uni:rita",
      permissions: ["notes:read", "approvals:decide"],
      is_authenticated: true,
    });
  });

  it("Warrant's own tokens still work there", async () => {
    const token = await mintApiToken(secret, {
      user_id: "alice",
      tenant: "uni",
      role: "student",
      scopes: ["notes:read"],
      grants: {},
    });
    expect(await authenticate(request(token))).toMatchObject({ identity: "uni:alice" });
  });

  it("refusals carry the same codes as npm start", async () => {
    const valid = await provider.accessToken("rita");
    const [header, , signature] = valid.split(".");
    const tampered = `${header}.${Buffer.from(JSON.stringify({ iss: provider.issuer, sub: "rita" })).toString("base64url")}.${signature}`;
    expect(await refusal(tampered)).toEqual({ status: 401, code: "token_invalid" });
    expect(await refusal(await provider.accessToken("nobody"))).toEqual({ status: 401, code: "principal_unmapped" });
    expect(await refusal("not-a-token")).toEqual({ status: 401, code: "token_malformed" });
  });

  it("a key set that cannot be fetched is 503 auth_unavailable", async () => {
    provider.jwksDown(true);
    try {
      await provider.rotate();
      const unknownKid = await provider.accessToken("rita");
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect(await refusal(unknownKid)).toEqual({ status: 503, code: "auth_unavailable" });
    } finally {
      provider.jwksDown(false);
    }
  });
});
