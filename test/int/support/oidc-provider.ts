/**
 * A real OpenID provider for the sign-in tests: `oidc-provider` (a certified
 * implementation) on a loopback port, with its development login and consent
 * pages (any password), the device authorization grant, and JWT access tokens
 * for the Warrant API's audience (RFC 8707 resource indicators).
 *
 * The HTTP server stays up across `rotate()` (a new provider instance with a
 * new signing key first, the old one still published), so the issuer URL
 * and its port never change; `jwksDown(true)` answers the key set with 503.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, type JWK } from "jose";
import Provider, { type ProviderContext } from "oidc-provider";

export const PAGE_CLIENT_ID = "warrant-page";
export const API_RESOURCE = "urn:warrant:api";

export interface TestAccount {
  email?: string;
  name?: string;
  /** The claim groups go under (default `groups`), and the groups. */
  groups: string[];
  tenant?: string;
}

export interface TestProvider {
  issuer: string;
  /** Who can sign in, by login name (mutable: a test removes a user from a group). */
  accounts: Map<string, TestAccount>;
  /** The private signing keys, newest first (tests sign forged tokens with them). */
  keys: JWK[];
  /** Mints an access token for the API as the provider's token endpoint would. */
  accessToken(login: string, options?: { ttlSeconds?: number }): Promise<string>;
  /** Publishes a new signing key (first) beside the old ones, without a restart of the issuer's address. */
  rotate(): Promise<JWK>;
  jwksDown(down: boolean): void;
  /** Adds a redirect URI of the page client (the Warrant server's origin, known after it starts). */
  allowRedirect(uri: string): void;
  close(): Promise<void>;
}

export async function newSigningKey(kind: "rsa" | "ec" = "rsa"): Promise<JWK> {
  const { privateKey } =
    kind === "rsa"
      ? generateKeyPairSync("rsa", { modulusLength: 2048 })
      : generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: randomUUID(), use: "sig", alg: kind === "rsa" ? "RS256" : "ES256" };
}

export async function startTestProvider(options: {
  audience: string;
  /** The claim groups go under: `groups`, or a namespaced one such as `https://warrant.example/roles`. */
  groupsClaim?: string;
  accounts: Record<string, TestAccount>;
  /** Offer the device authorization grant (default true). */
  deviceFlow?: boolean;
}): Promise<TestProvider> {
  const groupsClaim = options.groupsClaim ?? "groups";
  const accounts = new Map(Object.entries(options.accounts));
  const keys: JWK[] = [await newSigningKey()];
  const redirects = new Set<string>(["http://127.0.0.1/"]);
  let down = false;
  let provider: Provider | undefined;
  const server = http.createServer((request, response) => {
    if (down && request.url?.startsWith("/jwks")) {
      response.statusCode = 503;
      response.end();
      return;
    }
    if (!provider) {
      response.statusCode = 503;
      response.end();
      return;
    }
    provider.callback()(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const claimsOf = (login: string): Record<string, unknown> => {
    const account = accounts.get(login);
    if (!account) return {};
    return {
      [groupsClaim]: [...account.groups],
      ...(account.email ? { email: account.email } : {}),
      ...(account.name ? { name: account.name } : {}),
      ...(account.tenant ? { tenant: account.tenant } : {}),
    };
  };
  const resourceServer = {
    audience: options.audience,
    scope: "api",
    accessTokenFormat: "jwt" as const,
    accessTokenTTL: 600,
  };
  const build = () => {
    const built = new Provider(issuer, {
      clients: [
        {
          client_id: PAGE_CLIENT_ID,
          token_endpoint_auth_method: "none",
          application_type: "web",
          redirect_uris: [...redirects],
          post_logout_redirect_uris: [...redirects],
          grant_types: [
            "authorization_code",
            "refresh_token",
            ...(options.deviceFlow === false ? [] : ["urn:ietf:params:oauth:grant-type:device_code"]),
          ],
          response_types: ["code"],
        },
      ],
      jwks: { keys: [...keys] },
      findAccount: async (_context: unknown, id: string) =>
        accounts.has(id) ? { accountId: id, claims: async () => ({ sub: id, ...claimsOf(id) }) } : undefined,
      claims: { openid: ["sub"], profile: ["name"], email: ["email"], groups: [groupsClaim, "tenant"] },
      scopes: ["openid", "profile", "email", "groups", "offline_access", "api"],
      extraTokenClaims: async (_context: unknown, token: unknown) => {
        const accountId = (token as { accountId?: string }).accountId;
        return accountId ? claimsOf(accountId) : undefined;
      },
      features: {
        devInteractions: { enabled: true },
        deviceFlow: { enabled: options.deviceFlow !== false },
        revocation: { enabled: true },
        rpInitiatedLogout: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: async () => API_RESOURCE,
          useGrantedResource: async () => true,
          getResourceServerInfo: async () => resourceServer,
        },
      },
      pkce: { required: () => true },
      ttl: { AccessToken: 600, IdToken: 600, DeviceCode: 300, Interaction: 600, Session: 3600, Grant: 3600 },
      cookies: { keys: ["warrant-test-cookie-key"] },
      loadExistingGrant: async (context: ProviderContext) => {
        // Consent once per sign-in is enough for the tests; a grant found for the session is reused.
        const grantId =
          context.oidc.result?.consent?.grantId ??
          context.oidc.session?.grantIdFor(context.oidc.client?.clientId ?? "");
        return grantId ? context.oidc.provider.Grant.find(grantId) : undefined;
      },
    });
    built.proxy = false;
    return built;
  };
  provider = build();

  return {
    issuer,
    accounts,
    keys,
    async accessToken(login, tokenOptions = {}) {
      const current = provider as Provider;
      const client = await current.Client.find(PAGE_CLIENT_ID);
      if (!client) throw new Error("no page client");
      const token = new current.AccessToken({
        accountId: login,
        client,
        scope: "api",
        gty: "authorization_code",
        expiresIn: tokenOptions.ttlSeconds ?? 600,
        resourceServer: new current.ResourceServer(API_RESOURCE, resourceServer),
      } as never);
      return token.save();
    },
    async rotate() {
      const key = await newSigningKey();
      keys.unshift(key);
      provider = build();
      return key;
    },
    jwksDown(value) {
      down = value;
    },
    allowRedirect(uri) {
      redirects.add(uri);
      provider = build();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
