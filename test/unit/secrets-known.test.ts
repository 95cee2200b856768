/**
 * Credentials no pattern knows (issue 25): an opaque OAuth access or refresh
 * token, a client secret from a dynamic registration, a PKCE verifier. The
 * owner's OAuth provider remembers each as it obtains it, and every scanner
 * of the process then redacts it by value, in text and in JSON values.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { memoryCredentialStore, OwnerOAuthProvider } from "../../src/oauth/provider.js";
import { parseConfig } from "../../src/policy/config.js";
import { createSecretScanner, MIN_KNOWN_CHARS, rememberSecret } from "../../src/secrets/scanner.js";

const opaque = () => randomBytes(18).toString("hex");
const scanner = () => createSecretScanner({ key: new Uint8Array(randomBytes(32)) });

function ownerProvider() {
  const config = parseConfig(
    JSON.stringify({
      servers: {
        tickets: {
          transport: "http",
          url: "https://tickets.example/mcp",
          audience: "tickets",
          auth: { type: "oauth", grant: "authorization_code", redirect_uri: "https://warrant.example/oauth/callback" },
        },
      },
      tools: {},
    }),
  );
  const auth = config.servers["tickets"];
  if (auth?.transport !== "http" || !auth.auth) throw new Error("no auth");
  return new OwnerOAuthProvider({
    server: "tickets",
    owner: "alice",
    auth: auth.auth,
    store: memoryCredentialStore(),
    values: {},
  });
}

describe("credentials redacted by value", () => {
  it("an owner's access token, refresh token, registered client secret and PKCE verifier", async () => {
    const provider = ownerProvider();
    const access = opaque();
    const refresh = opaque();
    const verifier = randomBytes(32).toString("base64url");
    const clientSecret = opaque();
    const before = scanner();
    expect(before.text(`token ${access}`, "x").found).toEqual([]);
    await provider.saveTokens({ access_token: access, refresh_token: refresh, token_type: "Bearer" });
    await provider.saveCodeVerifier(verifier);
    await provider.saveClientInformation({ client_id: "dcr-client", client_secret: clientSecret });

    const after = scanner();
    const text = after.text(`a ${access} r ${refresh} v ${verifier} s ${clientSecret} end`, "error");
    for (const value of [access, refresh, verifier, clientSecret]) expect(text.value).not.toContain(value);
    expect(text.found.map((entry) => entry.kind)).toEqual([
      "oauth_token",
      "oauth_token",
      "pkce_verifier",
      "client_secret",
    ]);
    expect(text.value).toMatch(/^a \[redacted:oauth_token:[0-9a-f]{12}\] r \[redacted:oauth_token:/);
    // The scanner made before the tokens existed redacts them too: one registry for the process.
    const nested = before.value({ result: { items: [{ note: `refresh with ${refresh}` }] } }, "result");
    expect(JSON.stringify(nested.value)).not.toContain(refresh);
    expect(nested.found).toEqual([
      expect.objectContaining({ path: "result.result.items[0].note", kind: "oauth_token" }),
    ]);
  });

  it("does not remember values too short to be credentials", () => {
    const short = "a".repeat(MIN_KNOWN_CHARS - 1);
    rememberSecret("oauth_token", short);
    expect(scanner().text(`word ${short}`, "x").found).toEqual([]);
  });
});
