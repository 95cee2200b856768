/**
 * `auth` of a Streamable HTTP server in `warrant.config.json`: OAuth 2.1 per
 * the MCP authorization specification, run by the MCP SDK's client auth
 * (src/oauth/provider.ts). Two grants:
 *
 * - `authorization_code` (with PKCE): access on a user's behalf; each run's
 *   owner authorizes once, the token is kept per owner and server.
 * - `client_credentials`: access on the deployment's behalf, no user step;
 *   the client authenticates with `client_secret_basic`/`client_secret_post`
 *   (a secret) or `private_key_jwt` (a key).
 *
 * Client identity, in the order the SDK tries it: a pre-registered
 * `client_id` (and secret), a Client ID Metadata Document
 * (`client_metadata_url`, https), else Dynamic Client Registration.
 * Cross-app access (ID-JAG) is refused by design ({@link CROSS_APP_ACCESS_REFUSED}).
 * A secret or key is never written in the file: `client_secret` and
 * `private_key` name an environment variable as `${NAME}`.
 */
import { z } from "zod";

const PLACEHOLDER = /^\$\{([A-Z_][A-Z0-9_]{0,63})\}$/;

/** `${NAME}`: the environment variable holding a credential. */
const credential = (what: string) =>
  z
    .string()
    .max(70)
    .regex(PLACEHOLDER, {
      message: `${what} must name an environment variable as \${NAME}; a credential is never written in the config file`,
    });

const scope = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, {
    message: "a scope is printable ASCII without spaces, quotes or backslashes",
  });

/**
 * Cross-app access (SEP-990, Enterprise-Managed Authorization: an enterprise IdP's ID token exchanged for an ID-JAG,
 * RFC 8693, then for an access token by the jwt-bearer grant, RFC 7523) is refused by design: Warrant holds no
 * IdP ID token for a run's owner (its principals sign in to Warrant, not to the enterprise IdP on Warrant's behalf),
 * and an assertion grant would let the deployment act as any user without that user's own authorization.
 */
export const CROSS_APP_ACCESS_REFUSED =
  "cross-app access (ID-JAG token exchange, jwt-bearer grant) is not supported: Warrant holds no identity-provider " +
  "token for a run's owner; use authorization_code (the owner authorizes) or client_credentials (the deployment)";
const CROSS_APP_GRANTS = new Set([
  "cross_app_access",
  "jwt_bearer",
  "token_exchange",
  "urn:ietf:params:oauth:grant-type:jwt-bearer",
  "urn:ietf:params:oauth:grant-type:token-exchange",
]);
const isCrossAppAccess = (grant: unknown): boolean => typeof grant === "string" && CROSS_APP_GRANTS.has(grant);

export const OAuthConfigSchema = z
  .object({
    type: z.literal("oauth"),
    grant: z.enum(["authorization_code", "client_credentials"], {
      error: (issue) => (isCrossAppAccess(issue.input) ? CROSS_APP_ACCESS_REFUSED : undefined),
    }),
    /** A pre-registered client id (or, with `client_metadata_url` unset, a URL-based one). */
    client_id: z.string().min(1).max(2_048).optional(),
    client_secret: credential("client_secret").optional(),
    /** A PKCS#8 PEM private key for `private_key_jwt`. */
    private_key: credential("private_key").optional(),
    signing_algorithm: z.enum(["ES256", "ES384", "RS256", "RS384", "PS256", "EdDSA"]).default("ES256"),
    token_endpoint_auth_method: z
      .enum(["client_secret_basic", "client_secret_post", "private_key_jwt", "none"])
      .optional(),
    /** A Client ID Metadata Document (SEP-991): its URL is the client id where the server supports it. */
    client_metadata_url: z.string().url().max(2_048).optional(),
    client_name: z.string().min(1).max(128).default("Warrant"),
    /** Where the authorization server sends the user back: this deployment's `/oauth/callback`. */
    redirect_uri: z.string().url().max(2_048).optional(),
    /** The authorization server the pre-registered credentials belong to (they are presented to no other). */
    issuer: z.string().url().max(2_048).optional(),
    /** Scopes to ask for when neither `WWW-Authenticate` nor the resource metadata names any. */
    scopes: z.array(scope).max(50).optional(),
    /** Authorization rounds per request (initial and step-up on `insufficient_scope`) before the call fails. */
    max_authorization_attempts: z.number().int().min(1).max(3).default(3),
  })
  .strict()
  .superRefine((auth, context) => {
    const problem = (message: string, path: string) => context.addIssue({ code: "custom", message, path: [path] });
    if (auth.client_metadata_url !== undefined && !auth.client_metadata_url.startsWith("https://"))
      problem("a Client ID Metadata Document URL must be https", "client_metadata_url");
    if (auth.client_secret !== undefined && auth.client_id === undefined)
      problem("a client_secret needs the client_id it was issued for", "client_secret");
    if (auth.grant === "client_credentials") {
      if (auth.client_id === undefined)
        problem("the client_credentials grant needs a pre-registered client_id", "client_id");
      if (auth.client_secret === undefined && auth.private_key === undefined)
        problem("the client_credentials grant needs a client_secret or a private_key", "client_secret");
      if (auth.client_secret !== undefined && auth.private_key !== undefined)
        problem("give either a client_secret or a private_key, not both", "private_key");
      if (
        auth.private_key !== undefined &&
        (auth.token_endpoint_auth_method ?? "private_key_jwt") !== "private_key_jwt"
      )
        problem("a private_key authenticates with private_key_jwt", "token_endpoint_auth_method");
      if (auth.token_endpoint_auth_method === "none")
        problem("the client_credentials grant needs client authentication", "token_endpoint_auth_method");
      if (auth.redirect_uri !== undefined) problem("the client_credentials grant has no redirect", "redirect_uri");
    } else {
      if (auth.redirect_uri === undefined)
        problem("the authorization_code grant needs the deployment's redirect_uri (…/oauth/callback)", "redirect_uri");
      if (auth.private_key !== undefined)
        problem("private_key_jwt is supported for the client_credentials grant only", "private_key");
    }
  });

export type OAuthConfig = z.infer<typeof OAuthConfigSchema>;

/** The environment variable a `${NAME}` credential names. */
export function credentialName(placeholder: string): string {
  return PLACEHOLDER.exec(placeholder)?.[1] ?? "";
}

/** Every environment variable the servers' OAuth settings name (what the host must be given). */
export function credentialNames(
  servers: Record<string, { transport: string; auth?: OAuthConfig | undefined }>,
): string[] {
  return Object.values(servers).flatMap((server) =>
    [server.auth?.client_secret, server.auth?.private_key].flatMap((value) => (value ? [credentialName(value)] : [])),
  );
}
