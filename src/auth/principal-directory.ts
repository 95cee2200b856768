/**
 * The principal directory as it is now: read again whenever its file changes,
 * so permissions revoked in the directory take effect at the next check (an
 * approved write re-checks its owner at execution). A configured directory is
 * authoritative: a user it does not list, or lists under another tenant, is
 * no principal at all (`principal_revoked`), whatever their token claims.
 * Only a server run with `WARRANT_VERIFIED_CLAIMS_ONLY=1` (`verifiedOnly`)
 * trusts a verified token's claims as they are.
 */
import { statSync } from "node:fs";
import { ConfigError, isConfigError } from "../errors.js";
import { loadPrincipalDirectory, type Principal } from "./principal.js";

export interface PrincipalDirectory {
  /** The principal as the directory lists it now; throws `principal_revoked` when it no longer does. */
  current(principal: Principal): Promise<Principal>;
}

/** A directory over `filePath`, re-read when its modification time or size changes. */
export function principalDirectory(filePath: string): PrincipalDirectory {
  let cached: { key: string; directory: Map<string, Principal> } | undefined;
  const load = async (): Promise<Map<string, Principal>> => {
    // Synchronous: a stat is microseconds, and an asynchronous one goes through libuv's thread pool,
    // which many concurrent runs queue on (three checks a tool step).
    const info = statSync(filePath);
    const key = `${info.mtimeMs}:${info.size}`;
    if (cached?.key !== key) cached = { key, directory: await loadPrincipalDirectory(filePath) };
    return cached.directory;
  };
  return {
    async current(principal) {
      const entry = (await load()).get(principal.user_id);
      // A listed user of another tenant is not this principal: a tenant change counts as removal.
      if (!entry || entry.tenant !== principal.tenant) throw revoked(principal);
      return entry;
    },
  };
}

/**
 * A directory that narrows: the user must be listed under the same tenant,
 * and keeps only the scopes and grants both the token's issuer and the
 * directory give (the IdP's role stays). Used when `auth.oidc.directory` is
 * on, so an IdP's groups can never give more than the directory lists.
 */
export function narrowingDirectory(inner: PrincipalDirectory): PrincipalDirectory {
  return {
    async current(principal) {
      const listed = await inner.current(principal);
      const allowed = new Set(listed.scopes);
      const grants: Record<string, string[]> = {};
      for (const [kind, values] of Object.entries(principal.grants)) {
        const listedValues = new Set(Object.hasOwn(listed.grants, kind) ? (listed.grants[kind] ?? []) : []);
        const kept = values.filter((value) => listedValues.has(value));
        if (kept.length > 0) grants[kind] = kept;
      }
      return { ...principal, scopes: principal.scopes.filter((scope) => allowed.has(scope)), grants };
    },
  };
}

/**
 * The directory a deployment's settings and config choose, decided on first
 * use (the config is read lazily): without `auth.oidc`, the principal
 * directory as today; with it, the IdP is the authority (`verifiedOnly`)
 * unless `auth.oidc.directory` asks the directory to narrow.
 */
export function configuredDirectory(
  filePath: string,
  oidc: () => Promise<{ directory: boolean } | undefined>,
): PrincipalDirectory {
  let chosen: Promise<PrincipalDirectory> | undefined;
  const choose = async () => {
    const config = await oidc();
    if (config === undefined) return principalDirectory(filePath);
    return config.directory ? narrowingDirectory(principalDirectory(filePath)) : verifiedOnly;
  };
  return {
    async current(principal) {
      chosen ??= choose().catch((error: unknown) => {
        chosen = undefined;
        throw error;
      });
      return (await chosen).current(principal);
    },
  };
}

/** No directory: every principal stays as verified. */
export const verifiedOnly: PrincipalDirectory = { current: async (principal) => principal };

/** Whether an error is the directory refusing a principal it no longer lists. */
export function isPrincipalRevoked(error: unknown): boolean {
  return isConfigError(error) && error.code === "principal_revoked";
}

function revoked(principal: Principal): ConfigError {
  return new ConfigError(
    "principal_revoked",
    `"${principal.user_id}" of tenant "${principal.tenant}" is not in the principal directory`,
  );
}
