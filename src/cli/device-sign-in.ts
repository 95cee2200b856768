/**
 * Signing the CLI in with the organization's identity provider through the
 * device authorization grant (RFC 8628), run by `openid-client`: the CLI
 * shows a URL and a code, the user confirms them in any browser, and the
 * CLI receives the API token (the access token when the issuer names a
 * resource indicator, else the ID token, as the page does).
 *
 * Only for an issuer of `auth.oidc` with a `client_id`, and only where the
 * provider's discovery document names a `device_authorization_endpoint`.
 */
import * as client from "openid-client";
import type { OidcConfig, OidcIssuerConfig } from "../auth/oidc-config.js";
import { CliError } from "../errors.js";

/** The issuer to sign in with: the one named, or the first that has a public client. */
export function deviceIssuer(oidc: OidcConfig | undefined, named: string | undefined): OidcIssuerConfig {
  const candidates = (oidc?.issuers ?? []).filter((issuer) => issuer.client_id !== undefined);
  const issuer = named === undefined ? candidates[0] : candidates.find((candidate) => candidate.issuer === named);
  if (issuer === undefined)
    throw new CliError(
      "unsupported",
      named === undefined
        ? "no issuer of auth.oidc in the config names a client_id to sign in with"
        : `no issuer "${named}" with a client_id in auth.oidc`,
    );
  return issuer;
}

/** Runs the grant; `show` tells the user where to go. Resolves with the API token. */
export async function deviceSignIn(
  issuer: OidcIssuerConfig,
  show: (prompt: { verification_uri: string; verification_uri_complete?: string; user_code: string }) => void,
  options: { signal?: AbortSignal } = {},
): Promise<string> {
  const url = new URL(issuer.issuer);
  const configuration = await client
    .discovery(url, issuer.client_id ?? "", undefined, client.None(), {
      ...(url.protocol === "http:" ? { execute: [client.allowInsecureRequests] } : {}),
    })
    .catch((error: unknown) => {
      throw new CliError("auth_unavailable", `the identity provider ${issuer.issuer} did not answer: ${String(error)}`);
    });
  if (configuration.serverMetadata().device_authorization_endpoint === undefined)
    throw new CliError(
      "unsupported",
      `${issuer.issuer} does not offer the device authorization grant; pass a token with --token or WARRANT_TOKEN`,
    );
  const resource: Record<string, string> = issuer.resource ? { resource: issuer.resource } : {};
  const scopes = issuer.scopes.includes("openid") ? issuer.scopes : ["openid", ...issuer.scopes];
  const started = await client.initiateDeviceAuthorization(configuration, { scope: scopes.join(" "), ...resource });
  show({
    verification_uri: started.verification_uri,
    user_code: started.user_code,
    ...(started.verification_uri_complete ? { verification_uri_complete: started.verification_uri_complete } : {}),
  });
  const tokens = await client.pollDeviceAuthorizationGrant(configuration, started, resource, {
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const token = issuer.resource ? tokens.access_token : tokens.id_token;
  if (!token) throw new CliError("auth_unavailable", "the identity provider answered without the token the API needs");
  return token;
}
