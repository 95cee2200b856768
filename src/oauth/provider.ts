/**
 * The MCP SDK's OAuth client (`@modelcontextprotocol/sdk/client/auth`) does
 * discovery (RFC 9728 protected resource metadata from `WWW-Authenticate` and
 * the well-known paths; RFC 8414 and OpenID metadata with the 2025-03-26
 * fallbacks), client identity (pre-registered, Client ID Metadata Documents,
 * Dynamic Client Registration), PKCE, resource indicators, scope selection
 * and refresh. This module gives it what it asks a provider for, per grant:
 *
 * - `client_credentials`: the SDK's own `ClientCredentialsProvider` or
 *   `PrivateKeyJwtProvider`, one per server for the deployment.
 * - `authorization_code`: {@link OwnerOAuthProvider}, one per (owner, server),
 *   keeping tokens and the client registration in an
 *   {@link OAuthCredentialStore}; the authorization URL the SDK wants the
 *   user sent to is kept for the caller ({@link OwnerOAuthProvider.takeAuthorizationUrl}).
 *   Each authorization in progress has its own PKCE verifier, stored under
 *   its `state` ({@link authorizationIdOf}), so an owner may have several
 *   links out at once (two paused threads) and any of them completes.
 *   It asks for a refresh token (`offline_access`) where the authorization
 *   server lists that scope, and only there ({@link withOfflineAccess}, SEP-2207).
 */
import { createHash, randomBytes } from "node:crypto";
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { ConfigError } from "../errors.js";
import { credentialName, type OAuthConfig } from "./config.js";
import { rememberSecret } from "../secrets/scanner.js";

/**
 * Every credential the host obtains is remembered by value, so that every
 * scanner of the process redacts it in tool results, error messages, logs,
 * events, audit and checkpoints (src/secrets/scanner.ts), whatever its shape.
 */
function remembered<T extends OAuthTokens | undefined>(tokens: T): T {
  rememberSecret("oauth_token", tokens?.access_token);
  rememberSecret("oauth_token", tokens?.refresh_token);
  rememberSecret("oauth_token", tokens?.id_token);
  return tokens;
}

function rememberedClient<T extends OAuthClientInformationMixed | undefined>(client: T): T {
  rememberSecret("client_secret", client?.client_secret);
  return client;
}

/** The OIDC scope asking for a refresh token (SEP-2207). */
export const OFFLINE_ACCESS = "offline_access";

/**
 * The authorization URL with `offline_access` added to its scope when the authorization server lists it in its
 * metadata's `scopes_supported` (SEP-2207: a client that wants a refresh token asks for it there, and only there),
 * with `prompt=consent` as OpenID Connect requires for it. Otherwise the URL is unchanged.
 */
export function withOfflineAccess(url: URL, discovery: OAuthDiscoveryState | undefined): URL {
  const supported = discovery?.authorizationServerMetadata?.scopes_supported;
  if (!Array.isArray(supported) || !supported.includes(OFFLINE_ACCESS)) return url;
  const scopes = (url.searchParams.get("scope") ?? "").split(" ").filter(Boolean);
  if (scopes.includes(OFFLINE_ACCESS)) return url;
  const result = new URL(url);
  result.searchParams.set("scope", [...scopes, OFFLINE_ACCESS].join(" "));
  if (!result.searchParams.getAll("prompt").includes("consent")) result.searchParams.append("prompt", "consent");
  return result;
}

/** What is kept for one owner of one server. */
export interface OwnerCredentials {
  tokens?: OAuthTokens | undefined;
}

/** The id an authorization's verifier is stored under: a digest of its `state` (never the state itself). */
export function authorizationIdOf(state: string): string {
  return createHash("sha256").update(state).digest("base64url");
}

/**
 * Where OAuth credentials live: tokens per (owner, server), a PKCE verifier
 * per authorization in progress (owner, server, authorization id), a
 * server's dynamic registration per server. The in-memory store serves
 * tests and the conformance client; the server uses the encrypted Postgres
 * one (src/stores/oauth-token-store.ts).
 */
export interface OAuthCredentialStore {
  load(owner: string, server: string): Promise<OwnerCredentials>;
  save(owner: string, server: string, credentials: OwnerCredentials): Promise<void>;
  /**
   * Forgets an owner's tokens and authorizations in progress for a server:
   * what `disconnect` does; true when there were any.
   */
  remove(owner: string, server: string): Promise<boolean>;
  /** Forgets an owner's tokens for a server (the server refused them); authorizations in progress stay. */
  forgetTokens(owner: string, server: string): Promise<void>;
  /** Keeps the verifier of one authorization in progress (verifiers older than its link are dropped). */
  saveVerifier(owner: string, server: string, authorization: string, verifier: string): Promise<void>;
  loadVerifier(owner: string, server: string, authorization: string): Promise<string | undefined>;
  /** Forgets one authorization's verifier (it was used, or refused). */
  removeVerifier(owner: string, server: string, authorization: string): Promise<void>;
  loadClient(server: string): Promise<OAuthClientInformationMixed | undefined>;
  saveClient(server: string, client: OAuthClientInformationMixed | undefined): Promise<void>;
}

export function memoryCredentialStore(): OAuthCredentialStore {
  const owners = new Map<string, OwnerCredentials>();
  const verifiers = new Map<string, string>();
  const clients = new Map<string, OAuthClientInformationMixed>();
  const key = (owner: string, server: string) => JSON.stringify([owner, server]);
  const verifierKey = (owner: string, server: string, authorization: string) =>
    JSON.stringify([owner, server, authorization]);
  return {
    load: async (owner, server) => ({ ...owners.get(key(owner, server)) }),
    save: async (owner, server, credentials) => void owners.set(key(owner, server), { ...credentials }),
    remove: async (owner, server) => {
      const prefix = JSON.stringify([owner, server]).slice(0, -1);
      const links = [...verifiers.keys()].filter((entry) => entry.startsWith(`${prefix},`));
      for (const entry of links) verifiers.delete(entry);
      return owners.delete(key(owner, server)) || links.length > 0;
    },
    forgetTokens: async (owner, server) => void owners.delete(key(owner, server)),
    saveVerifier: async (owner, server, authorization, verifier) =>
      void verifiers.set(verifierKey(owner, server, authorization), verifier),
    loadVerifier: async (owner, server, authorization) => verifiers.get(verifierKey(owner, server, authorization)),
    removeVerifier: async (owner, server, authorization) =>
      void verifiers.delete(verifierKey(owner, server, authorization)),
    loadClient: async (server) => clients.get(server),
    saveClient: async (server, client) => {
      if (client) clients.set(server, client);
      else clients.delete(server);
    },
  };
}

/** Resolves a `${NAME}` credential to its value (given to the host from the environment by env.ts). */
function credentialValue(
  placeholder: string,
  values: Readonly<Record<string, string | undefined>>,
  server: string,
  kind: "client_secret" | "private_key" = "client_secret",
) {
  const name = credentialName(placeholder);
  const value = Object.hasOwn(values, name) ? values[name] : undefined;
  if (!value) throw new ConfigError("config_invalid", `server ${server}: the environment variable ${name} is not set`);
  rememberSecret(kind, value);
  return value;
}

/**
 * Checked at start, before any server is contacted: every `${NAME}` credential
 * the servers' OAuth settings name has a value, else a `config_invalid` error
 * naming the server and the variable (never a value).
 */
export function checkCredentials(
  servers: Record<string, { transport: string; auth?: OAuthConfig | undefined }>,
  values: Readonly<Record<string, string | undefined>>,
): void {
  for (const [server, { auth }] of Object.entries(servers)) {
    if (auth?.client_secret !== undefined) credentialValue(auth.client_secret, values, server);
    if (auth?.private_key !== undefined) credentialValue(auth.private_key, values, server, "private_key");
  }
}

/** The SDK's provider, its tokens remembered for redaction as they are saved. */
function rememberingTokens<P extends OAuthClientProvider>(provider: P): P {
  const save = provider.saveTokens.bind(provider);
  provider.saveTokens = (tokens) => save(remembered(tokens));
  return provider;
}

/** The deployment's provider for a `client_credentials` server (the SDK's own providers). */
export function deploymentProvider(
  server: string,
  auth: OAuthConfig,
  values: Readonly<Record<string, string | undefined>>,
): OAuthClientProvider {
  const clientId = auth.client_id ?? "";
  const scope = auth.scopes?.join(" ");
  const common = {
    clientId,
    clientName: auth.client_name,
    ...(scope ? { scope } : {}),
    ...(auth.issuer ? { expectedIssuer: auth.issuer } : {}),
  };
  if (auth.private_key !== undefined)
    return rememberingTokens(
      new PrivateKeyJwtProvider({
        ...common,
        privateKey: credentialValue(auth.private_key, values, server, "private_key"),
        algorithm: auth.signing_algorithm,
      }),
    );
  const provider = new ClientCredentialsProvider({
    ...common,
    clientSecret: credentialValue(auth.client_secret ?? "", values, server),
  });
  // The SDK's provider defaults to client_secret_basic; the config may ask for client_secret_post. The SDK picks the
  // method from the client information (not the metadata), preferring basic whenever the server lists it.
  if (auth.token_endpoint_auth_method === "client_secret_post") {
    const metadata = provider.clientMetadata;
    Object.defineProperty(provider, "clientMetadata", {
      get: () => ({ ...metadata, token_endpoint_auth_method: "client_secret_post" }),
    });
    const information = provider.clientInformation.bind(provider);
    provider.clientInformation = () => ({ ...information(), token_endpoint_auth_method: "client_secret_post" });
  }
  return rememberingTokens(provider);
}

interface OwnerProviderOptions {
  server: string;
  owner: string;
  auth: OAuthConfig;
  store: OAuthCredentialStore;
  values: Readonly<Record<string, string | undefined>>;
  /** The `state` parameter: bound by the caller to who asked (thread, owner, server). */
  state?: () => string | Promise<string>;
}

/**
 * An owner's provider for an `authorization_code` server. The one a session
 * holds starts an authorization only with `authorize` (tests, the
 * conformance client); a caller's link comes from {@link withAuthorization},
 * a provider of its own bound to that link's `state`, which is also the one
 * that completes it: its verifier is found by the state the callback brings.
 */
export class OwnerOAuthProvider implements OAuthClientProvider {
  private authorizationUrl: URL | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  private readonly staticClient: OAuthClientInformationMixed | undefined;
  /** The `state` of the authorization this provider starts or completes, once known. */
  private currentState: string | undefined;
  /** Bound to one authorization ({@link withAuthorization}): every URL it asks for carries that state. */
  private readonly bound: boolean;

  constructor(
    private readonly options: OwnerProviderOptions,
    state?: string,
  ) {
    this.currentState = state;
    this.bound = state !== undefined;
    const { auth, server, values } = options;
    this.staticClient =
      auth.client_id === undefined
        ? undefined
        : {
            client_id: auth.client_id,
            ...(auth.client_secret ? { client_secret: credentialValue(auth.client_secret, values, server) } : {}),
            ...(auth.issuer ? { issuer: auth.issuer } : {}),
          };
  }

  get redirectUrl(): string | undefined {
    return this.options.auth.redirect_uri;
  }

  get clientMetadataUrl(): string | undefined {
    return this.options.auth.client_metadata_url;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { auth } = this.options;
    return {
      client_name: auth.client_name,
      redirect_uris: auth.redirect_uri ? [auth.redirect_uri] : [],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method:
        auth.token_endpoint_auth_method ?? (auth.client_secret ? "client_secret_basic" : "none"),
      ...(auth.scopes ? { scope: auth.scopes.join(" ") } : {}),
    };
  }

  async state(): Promise<string> {
    if (this.bound && this.currentState !== undefined) return this.currentState;
    // Unbound (a session's own, with `authorize`): each authorization it starts has a state of its own.
    this.currentState = this.options.state ? await this.options.state() : randomBytes(24).toString("base64url");
    return this.currentState;
  }

  /** A provider for the one authorization that carries `state` (its URL, its verifier, its completion). */
  withAuthorization(state: string): OwnerOAuthProvider {
    const bound = new OwnerOAuthProvider(this.options, state);
    bound.discovery = this.discovery;
    return bound;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    return rememberedClient(this.staticClient ?? (await this.options.store.loadClient(this.options.server)));
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    rememberedClient(client);
    if (!this.staticClient) await this.options.store.saveClient(this.options.server, client);
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    return remembered((await this.options.store.load(this.options.owner, this.options.server)).tokens);
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const { owner, server, store } = this.options;
    remembered(tokens);
    await store.save(owner, server, { tokens });
    // A completed exchange consumes its verifier; the owner's other links keep theirs.
    if (this.currentState !== undefined)
      await store.removeVerifier(owner, server, authorizationIdOf(this.currentState));
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = withOfflineAccess(authorizationUrl, this.discovery);
  }

  /** The authorization URL the SDK asked the user to be sent to, once. */
  takeAuthorizationUrl(): URL | undefined {
    const url = this.authorizationUrl;
    this.authorizationUrl = undefined;
    return url;
  }

  /** Forgets the owner's tokens (the server refused them); authorizations in progress keep their verifiers. */
  async forgetTokens(): Promise<void> {
    const { owner, server, store } = this.options;
    await store.forgetTokens(owner, server);
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    const { owner, server, store } = this.options;
    rememberSecret("pkce_verifier", codeVerifier);
    // The SDK asks for the state just before; that authorization's verifier is kept under it.
    const state = this.currentState ?? (await this.state());
    await store.saveVerifier(owner, server, authorizationIdOf(state), codeVerifier);
  }

  async codeVerifier(): Promise<string> {
    const { owner, server, store } = this.options;
    const verifier =
      this.currentState === undefined
        ? undefined
        : await store.loadVerifier(owner, server, authorizationIdOf(this.currentState));
    if (!verifier) throw new Error("no authorization with this state is in progress for this owner and server");
    rememberSecret("pkce_verifier", verifier);
    return verifier;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    const { owner, server, store } = this.options;
    if (scope === "all" || scope === "discovery") this.discovery = undefined;
    if (scope === "all" || scope === "client") await store.saveClient(server, undefined);
    if (scope === "all" || scope === "tokens") await store.forgetTokens(owner, server);
    if ((scope === "all" || scope === "verifier") && this.currentState !== undefined)
      await store.removeVerifier(owner, server, authorizationIdOf(this.currentState));
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
}
