/**
 * What a verified token must still pass before a request is served: the
 * token must not be revoked (src/auth/revocations.ts), and its user must be
 * listed, under the same tenant, by the principal directory (unless the
 * server trusts verified claims only). The request then acts as the
 * directory lists the user now.
 */
import type { Principal } from "./principal.js";
import { isPrincipalRevoked, type PrincipalDirectory } from "./principal-directory.js";
import type { RevocationList, TokenIdentity } from "./revocations.js";

export type Admission =
  | { ok: true; principal: Principal }
  | { ok: false; code: "token_revoked" | "principal_revoked"; message: string };

export interface RequestGate {
  admit(verified: { principal: Principal; token: { jti: string; issued_at: number } }): Promise<Admission>;
}

export function requestGate(options: { revocations: RevocationList; directory: PrincipalDirectory }): RequestGate {
  return {
    async admit({ principal, token }) {
      const identity: TokenIdentity = { user_id: principal.user_id, jti: token.jti, issued_at: token.issued_at };
      const refusal = await options.revocations.refusal(identity);
      if (refusal !== undefined) return { ok: false, code: "token_revoked", message: refusal };
      try {
        return { ok: true, principal: await options.directory.current(principal) };
      } catch (error) {
        if (!isPrincipalRevoked(error)) throw error;
        return { ok: false, code: "principal_revoked", message: (error as Error).message };
      }
    },
  };
}
