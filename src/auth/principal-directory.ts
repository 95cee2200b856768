/**
 * The principal directory as it is now: read again whenever its file changes,
 * so permissions revoked in the directory take effect at the next check (an
 * approved write re-checks its owner at execution). The directory is the
 * authority for the users it lists; a user it does not list keeps the
 * principal the entry point verified (a token's claims).
 */
import { statSync } from "node:fs";
import { loadPrincipalDirectory, type Principal } from "./principal.js";

export interface PrincipalDirectory {
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
      // A listed user of another tenant is not this principal: nothing of theirs is borrowed.
      if (!entry || entry.tenant !== principal.tenant) return principal;
      return entry;
    },
  };
}

/** No directory: every principal stays as verified. */
export const verifiedOnly: PrincipalDirectory = { current: async (principal) => principal };
