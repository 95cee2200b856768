/**
 * SEP-2207 in src/oauth/provider.ts: the owner's provider asks for `offline_access` (a refresh token) when the
 * authorization server's metadata lists it in `scopes_supported`, and never otherwise; the authorization URL
 * the provider keeps for the owner is the one with the scope added (and `prompt=consent`, as OIDC requires).
 */
import type { OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import { describe, expect, it } from "vitest";
import { memoryCredentialStore, OwnerOAuthProvider, withOfflineAccess } from "../../src/oauth/provider.js";

const AUTHORIZE = "https://as.example/authorize?response_type=code&client_id=c&state=s";
const discovery = (scopes_supported?: unknown): OAuthDiscoveryState =>
  ({
    authorizationServerUrl: "https://as.example",
    authorizationServerMetadata: {
      issuer: "https://as.example",
      authorization_endpoint: "https://as.example/authorize",
      token_endpoint: "https://as.example/token",
      response_types_supported: ["code"],
      ...(scopes_supported === undefined ? {} : { scopes_supported }),
    },
  }) as OAuthDiscoveryState;

const scopesOf = (url: URL) => url.searchParams.get("scope")?.split(" ") ?? [];

describe("offline_access (SEP-2207)", () => {
  it("is added to the requested scopes, with prompt=consent, when the AS lists it", () => {
    const url = withOfflineAccess(
      new URL(`${AUTHORIZE}&scope=mcp%3Abasic`),
      discovery(["mcp:basic", "offline_access"]),
    );
    expect(scopesOf(url)).toEqual(["mcp:basic", "offline_access"]);
    expect(url.searchParams.getAll("prompt")).toEqual(["consent"]);
    expect(url.searchParams.get("state")).toBe("s");
  });

  it("is the only scope when none was requested and the AS lists it", () => {
    expect(scopesOf(withOfflineAccess(new URL(AUTHORIZE), discovery(["offline_access"])))).toEqual(["offline_access"]);
  });

  it("is not requested when the AS does not list it, lists nothing, or its metadata is malformed", () => {
    for (const supported of [["mcp:basic", "mcp:read"], undefined, "offline_access", { offline_access: true }, [7]]) {
      const url = withOfflineAccess(new URL(`${AUTHORIZE}&scope=mcp%3Abasic`), discovery(supported));
      expect(scopesOf(url)).toEqual(["mcp:basic"]);
      expect(url.searchParams.has("prompt")).toBe(false);
    }
    expect(withOfflineAccess(new URL(AUTHORIZE), undefined).searchParams.has("scope")).toBe(false);
  });

  it("is not added twice, nor is a second prompt=consent", () => {
    const already = new URL(`${AUTHORIZE}&scope=offline_access+mcp%3Abasic&prompt=consent`);
    const url = withOfflineAccess(already, discovery(["mcp:basic", "offline_access"]));
    expect(scopesOf(url)).toEqual(["offline_access", "mcp:basic"]);
    expect(url.searchParams.getAll("prompt")).toEqual(["consent"]);
  });

  it("is in the authorization URL the owner's provider keeps, once the discovery named it", () => {
    const provider = new OwnerOAuthProvider({
      server: "tickets",
      owner: "dana",
      auth: {
        type: "oauth",
        grant: "authorization_code",
        redirect_uri: "https://warrant.example/oauth/callback",
        client_name: "Warrant",
        signing_algorithm: "ES256",
        max_authorization_attempts: 3,
      },
      store: memoryCredentialStore(),
      values: {},
    });
    provider.saveDiscoveryState(discovery(["mcp:basic", "offline_access"]));
    provider.redirectToAuthorization(new URL(`${AUTHORIZE}&scope=mcp%3Abasic`));
    const kept = provider.takeAuthorizationUrl();
    expect(kept && scopesOf(kept)).toEqual(["mcp:basic", "offline_access"]);
    expect(provider.takeAuthorizationUrl()).toBeUndefined();
  });
});
