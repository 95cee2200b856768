/**
 * `auth.oidc` in `warrant.config.json`: the organization's OpenID Connect
 * issuers whose tokens the API, the page, the CLI and Studio accept, and how
 * each issuer's claims become Warrant's principal (src/auth/claim-mapping.ts).
 *
 * A token is matched to one issuer by its `iss` claim only (exact string).
 * Each issuer has its own audience, algorithms, clock skew and mapping:
 * which claim names the user, which claim lists the user's groups or roles
 * (a plain `groups` list, or roles under a namespaced claim such as
 * `https://warrant.example/roles`), where the tenant comes from (a claim or a
 * fixed value), and what each group grants. A group the mapping does not name
 * grants nothing.
 */
import { z } from "zod";
import { GrantsSchema } from "./principal.js";

const ID = /^[a-z0-9_-]{1,64}$/;

/** Asymmetric algorithms only: an HMAC algorithm would let the public key (or anyone's guess) sign. */
export const OIDC_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "EdDSA",
] as const;
export type OidcAlgorithm = (typeof OIDC_ALGORITHMS)[number];

/** A claim's name as the token spells it: `groups`, `email`, or a namespaced URL. */
const claimName = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[\x21-\x7e]+$/, { message: "a claim name is printable ASCII without spaces" });

const scope = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, {
    message: "a scope is printable ASCII without spaces, quotes or backslashes",
  });

/** What one group (or role) of the IdP grants. */
export const GroupMappingSchema = z
  .object({
    role: z.string().min(1).max(32),
    scopes: z.array(z.string().min(1).max(64)).max(64).default([]),
    grants: GrantsSchema.default({}),
    /** Members may use the operator commands (`npm run trace`, `audit`, `tools`) with their IdP token. */
    operator: z.boolean().default(false),
  })
  .strict();
export type GroupMapping = z.infer<typeof GroupMappingSchema>;

/** An issuer URL: https, or http on a loopback host (a provider started for development or tests). */
const issuerUrl = z
  .string()
  .max(512)
  .url()
  .refine(
    (value) => {
      const url = new URL(value);
      if (url.search !== "" || url.hash !== "") return false;
      return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
    },
    { message: "must be https (or http on a loopback host), without query or fragment" },
  );

export const OidcIssuerSchema = z
  .object({
    /** The issuer identifier exactly as the provider's discovery document and its tokens' `iss` spell it. */
    issuer: issuerUrl,
    /** The `aud` the API's tokens carry (one value, or several any of which is accepted). */
    audience: z.union([z.string().min(1).max(256), z.array(z.string().min(1).max(256)).min(1).max(8)]),
    algorithms: z.array(z.enum(OIDC_ALGORITHMS)).min(1).default(["RS256", "ES256", "EdDSA"]),
    clock_skew_seconds: z.number().int().min(0).max(300).default(30),
    /** Shortest wait between two refetches of the key set for an unknown `kid` (rotation; rate limit). */
    jwks_cooldown_seconds: z.number().int().min(1).max(3600).default(30),
    /** The public client the page and the CLI sign in with (authorization code + PKCE, device grant). */
    client_id: z.string().min(1).max(256).optional(),
    /** Scopes the page and the CLI ask for; `openid` always. */
    scopes: z.array(scope).max(16).default(["openid", "profile", "email"]),
    /** A resource indicator (RFC 8707) the page and the CLI send, for providers that mint API tokens per resource. */
    resource: z.string().url().max(512).optional(),
    claims: z
      .object({
        /** The claim whose value is the user id (`sub` by default). */
        user: claimName.default("sub"),
        /** The claim listing the user's groups or roles: `groups`, or a namespaced one. */
        groups: claimName.default("groups"),
        name: claimName.default("name"),
      })
      .strict()
      .default({ user: "sub", groups: "groups", name: "name" }),
    /** The tenant: read from a claim, or fixed for every user of this issuer. */
    tenant: z.union([
      z.object({ claim: claimName }).strict(),
      z.object({ fixed: z.string().regex(ID, { message: "a tenant is 1-64 of a-z 0-9 _ -" }) }).strict(),
    ]),
    /** Group (or role) name → what it grants. The first listed group the user has that names a role gives the role. */
    groups: z.record(z.string().min(1).max(256), GroupMappingSchema),
    /** What a user with none of the mapped groups gets; absent, such a user is refused (`principal_unmapped`). */
    default: GroupMappingSchema.optional(),
  })
  .strict();
export type OidcIssuerConfig = z.infer<typeof OidcIssuerSchema>;

export const OidcConfigSchema = z
  .object({
    issuers: z.array(OidcIssuerSchema).min(1).max(8),
    /** Keep accepting Warrant's own HS256 tokens (`npm run token`, the CLI's own) beside the issuers'. */
    dev_tokens: z.boolean().default(true),
    /**
     * `false` (default): the IdP is the authority, its mapped claims are the principal.
     * `true`: the principal directory (WARRANT_PRINCIPALS) must list the user under the same tenant, and narrows
     * the IdP's scopes and grants to what it lists.
     */
    directory: z.boolean().default(false),
  })
  .strict()
  .superRefine((config, context) => {
    const seen = new Set<string>();
    config.issuers.forEach((issuer, index) => {
      if (seen.has(issuer.issuer))
        context.addIssue({ code: "custom", path: ["issuers", index, "issuer"], message: "is listed twice" });
      seen.add(issuer.issuer);
    });
  });
export type OidcConfig = z.infer<typeof OidcConfigSchema>;

export const AuthConfigSchema = z.object({ oidc: OidcConfigSchema.optional() }).strict().default({});

/** Whether a host name is the loopback interface. */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === "localhost" || hostname === "[::1]" || hostname === "::1" || /^127\.\d+\.\d+\.\d+$/.test(hostname)
  );
}
