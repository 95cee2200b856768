/**
 * Sign-in with the organization's identity provider: authorization code +
 * PKCE as a public client, run by `openid-client` (no secret in the page).
 * The server lists the issuers it accepts at `/ui/sign-in`; the page sends
 * the user to one, comes back to `/` with a code, trades it for tokens and
 * keeps the API token as it keeps any token (session.ts). Sign-out ends the
 * provider's session too when the provider offers RP-initiated logout.
 *
 * The API token is the access token when the issuer names a resource
 * indicator (a JWT for the API's audience), else the ID token.
 */
import * as client from "openid-client";

export interface SignInIssuer {
  issuer: string;
  client_id: string;
  scopes: string[];
  resource?: string;
}

/** What survives the round trip to the provider: this tab's sessionStorage, cleared on return. */
const PENDING_KEY = "warrant.oidc.pending";
/** The ID token and issuer of the current sign-in, for sign-out at the provider. */
const SIGNED_IN_KEY = "warrant.oidc.signed_in";

interface Pending {
  issuer: SignInIssuer;
  verifier: string;
  state: string;
  nonce: string;
}

async function configurationOf(issuer: SignInIssuer): Promise<client.Configuration> {
  const url = new URL(issuer.issuer);
  // http only for a loopback issuer (the server's config refuses any other).
  const options = url.protocol === "http:" ? { execute: [client.allowInsecureRequests] } : undefined;
  return client.discovery(url, issuer.client_id, undefined, client.None(), options);
}

function redirectUri(): string {
  return `${window.location.origin}/`;
}

/** Sends the browser to the provider's sign-in. */
export async function startSignIn(issuer: SignInIssuer): Promise<void> {
  const configuration = await configurationOf(issuer);
  const verifier = client.randomPKCECodeVerifier();
  const pending: Pending = { issuer, verifier, state: client.randomState(), nonce: client.randomNonce() };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = client.buildAuthorizationUrl(configuration, {
    redirect_uri: redirectUri(),
    scope: issuer.scopes.join(" "),
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state: pending.state,
    nonce: pending.nonce,
    ...(issuer.resource ? { resource: issuer.resource } : {}),
  });
  window.location.assign(url.href);
}

/** Whether the page was loaded as the provider's redirect back to us. */
export function isSignInReturn(): boolean {
  const params = new URLSearchParams(window.location.search);
  return (params.has("code") || params.has("error")) && sessionStorage.getItem(PENDING_KEY) !== null;
}

/** Completes a sign-in the page was redirected back from: the API token, or an error to show. */
export async function completeSignIn(): Promise<string> {
  const text = sessionStorage.getItem(PENDING_KEY);
  sessionStorage.removeItem(PENDING_KEY);
  const current = new URL(window.location.href);
  // The code is single-use and the URL is shareable: take it out of the address bar at once.
  const clean = new URL(current);
  for (const key of ["code", "state", "iss", "error", "error_description", "session_state"])
    clean.searchParams.delete(key);
  window.history.replaceState(null, "", clean);
  if (text === null) throw new Error("no sign-in was started in this tab");
  const pending = JSON.parse(text) as Pending;
  const configuration = await configurationOf(pending.issuer);
  const tokens = await client.authorizationCodeGrant(
    configuration,
    current,
    { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce },
    pending.issuer.resource ? { resource: pending.issuer.resource } : undefined,
  );
  const token = pending.issuer.resource ? tokens.access_token : tokens.id_token;
  if (!token) throw new Error("the provider answered without the token the API needs");
  sessionStorage.setItem(SIGNED_IN_KEY, JSON.stringify({ issuer: pending.issuer, id_token: tokens.id_token }));
  return token;
}

/** Ends the provider's session (when it offers RP-initiated logout) after the page forgot its token. */
export async function signOutAtProvider(): Promise<boolean> {
  const text = sessionStorage.getItem(SIGNED_IN_KEY);
  sessionStorage.removeItem(SIGNED_IN_KEY);
  if (text === null) return false;
  const signedIn = JSON.parse(text) as { issuer: SignInIssuer; id_token?: string };
  const configuration = await configurationOf(signedIn.issuer);
  if (configuration.serverMetadata().end_session_endpoint === undefined) return false;
  const url = client.buildEndSessionUrl(configuration, {
    post_logout_redirect_uri: redirectUri(),
    ...(signedIn.id_token ? { id_token_hint: signedIn.id_token } : {}),
  });
  window.location.assign(url.href);
  return true;
}
