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
