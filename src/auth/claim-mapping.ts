/**
 * Claims to principal: what a verified token of an OpenID Connect issuer
 * makes its bearer in Warrant. Pure and declarative: the issuer's `claims`,
 * `tenant`, `groups` and `default` (src/auth/oidc-config.ts) decide
 * everything, and a group the mapping does not name grants nothing.
 *
 * - user id: the configured claim (`sub` by default) when it already reads as
 *   a Warrant user id (1-64 of a-z 0-9 _ -); otherwise `u-` and 40 hex digits
 *   of SHA-256 over the issuer and the value, so an IdP's opaque or mixed-case
 *   subject is a stable id that no other issuer's subject can collide with.
 * - role: the first group, in the mapping's order, that the user has;
 *   scopes and grants: the union over every mapped group the user has.
 * - operator: whether any of those groups is marked `operator`.
 */
import { createHash } from "node:crypto";
import type { GroupMapping, OidcIssuerConfig } from "./oidc-config.js";
import { PrincipalSchema, type Principal } from "./principal.js";

const ID = /^[a-z0-9_-]{1,64}$/;
/** More groups than this in one token is refused rather than scanned. */
export const MAX_GROUPS = 256;
const MAX_GROUP_LENGTH = 256;

export type ClaimMapping =
  | { ok: true; principal: Principal; operator: boolean }
  | { ok: false; code: "token_malformed" | "principal_unmapped"; message: string };

/** Maps a verified token's claims (already checked for `iss`, `aud`, time and signature) to a principal. */
export function principalFromClaims(issuer: OidcIssuerConfig, claims: Record<string, unknown>): ClaimMapping {
  const subject = ownClaim(claims, issuer.claims.user);
  if (typeof subject !== "string" || subject === "" || subject.length > 256)
    return refuse("token_malformed", `the token has no usable "${issuer.claims.user}" claim`);
  const userId = ID.test(subject) ? subject : `u-${digest(`${issuer.issuer}\n${subject}`)}`;

  const tenant = "fixed" in issuer.tenant ? issuer.tenant.fixed : ownClaim(claims, issuer.tenant.claim);
  if (typeof tenant !== "string" || !ID.test(tenant))
    return refuse("token_malformed", "the token's tenant claim is missing or not a tenant id");

  const groups = groupsOf(ownClaim(claims, issuer.claims.groups));
  if (groups === undefined)
    return refuse("token_malformed", `the "${issuer.claims.groups}" claim is not a list of names`);
  const held = new Set(groups);
  const mapped = Object.entries(issuer.groups)
    .filter(([group]) => held.has(group))
    .map(([, mapping]) => mapping);
  const effective = mapped.length > 0 ? mapped : issuer.default ? [issuer.default] : [];
  const first = effective[0];
  if (first === undefined) return refuse("principal_unmapped", "none of the user's groups is mapped to a Warrant role");

  const name = ownClaim(claims, issuer.claims.name);
  const parsed = PrincipalSchema.safeParse({
    user_id: userId,
    tenant,
    role: first.role,
    scopes: [...new Set(effective.flatMap((mapping) => mapping.scopes))],
    grants: unionGrants(effective),
    ...(typeof name === "string" && name.length > 0 ? { display_name: safeName(name) } : {}),
  });
  if (!parsed.success)
    return refuse("token_malformed", "the mapped principal is out of bounds (too many scopes or grants)");
  return { ok: true, principal: parsed.data, operator: effective.some((mapping) => mapping.operator) };
}

/** The groups claim as a list of names: an array of strings, or one space-separated string. */
function groupsOf(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return [];
  const list = typeof value === "string" ? value.split(" ").filter((part) => part !== "") : value;
  if (!Array.isArray(list) || list.length > MAX_GROUPS) return undefined;
  const names: string[] = [];
  for (const entry of list) {
    if (typeof entry !== "string" || entry.length > MAX_GROUP_LENGTH) return undefined;
    names.push(entry);
  }
  return names;
}

function unionGrants(mappings: readonly GroupMapping[]): Record<string, string[]> {
  const union = new Map<string, Set<string>>();
  for (const mapping of mappings) {
    for (const [kind, values] of Object.entries(mapping.grants)) {
      const set = union.get(kind) ?? new Set<string>();
      for (const value of values) set.add(value);
      union.set(kind, set);
    }
  }
  return Object.fromEntries([...union].map(([kind, values]) => [kind, [...values]]));
}

/** A claim by own property: a claim name is the token's text, never a path into the prototype. */
function ownClaim(claims: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(claims, name) ? claims[name] : undefined;
}

/** A display name without control characters, at most 128 characters. */
function safeName(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
  return name.replace(/[\u0000-\u001f\u007f-\u009f]/g, "").slice(0, 128);
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 40);
}

function refuse(code: "token_malformed" | "principal_unmapped", message: string): ClaimMapping {
  return { ok: false, code, message };
}
