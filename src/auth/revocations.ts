/**
 * Revoked API tokens, kept in Postgres (`<schema>.token_revocations`,
 * `<schema>.user_revocations`: src/stores/revocation-store.ts), shared by
 * every instance on the database:
 *
 * - a single token by its id (`jti`): `npm run token -- --revoke <jti>`;
 * - a user's "not before": every token of the user issued before that moment
 *   (to the second) is refused: `npm run token -- --revoke-user alice`.
 *
 * Each instance keeps the lists in memory and reads them again when they are
 * older than `refreshMs` (1 s), before it answers the request that found them
 * stale, so a revocation is honoured everywhere within about a second. A
 * failed refresh fails the request (503), never admits on a stale list.
 * Rows older than the longest token lifetime are useless (the tokens they
 * name have expired) and are dropped.
 */
/** A token id as `mintApiToken` writes it (a UUID), or any other issuer's within the claim's bounds. */
export const JTI_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;
/** A user id as the principal directory spells it. */
export const USER_ID_PATTERN = /^[a-z0-9_-]{1,64}$/;
/** How old the in-memory lists may be before a request reads them again. */
export const REVOCATION_REFRESH_MS = 1_000;

export interface Revocations {
  /** Token ids revoked. */
  tokens: ReadonlySet<string>;
  /** Per user: tokens issued before this second (epoch seconds) are refused. */
  notBefore: ReadonlyMap<string, number>;
}

/** Where the lists are read from (the table: `src/stores/revocation-store.ts`). */
export interface RevocationSource {
  /** The revocations still relevant (younger than the longest token lifetime). */
  load(): Promise<Revocations>;
}

/** What a request's token is checked by: who, which token, when it was issued (epoch seconds). */
export interface TokenIdentity {
  user_id: string;
  jti: string;
  issued_at: number;
}

/** The revocation lists of one instance, read again when older than `refreshMs`. */
export class RevocationList {
  #store: RevocationSource;
  #refreshMs: number;
  #now: () => number;
  #loaded: { at: number; revocations: Revocations } | undefined;
  #loading: Promise<Revocations> | undefined;

  constructor(store: RevocationSource, options: { refreshMs?: number; now?: () => number } = {}) {
    this.#store = store;
    this.#refreshMs = options.refreshMs ?? REVOCATION_REFRESH_MS;
    this.#now = options.now ?? Date.now;
  }

  /** Why the token is refused (`token_revoked` with a message), or undefined when it is not revoked. */
  async refusal(token: TokenIdentity): Promise<string | undefined> {
    const { tokens, notBefore } = await this.#current();
    if (tokens.has(token.jti)) return "this token has been revoked";
    const since = notBefore.get(token.user_id);
    if (since !== undefined && token.issued_at < since)
      return `tokens of "${token.user_id}" issued before now are revoked`;
    return undefined;
  }

  async #current(): Promise<Revocations> {
    const loaded = this.#loaded;
    if (loaded && this.#now() - loaded.at < this.#refreshMs) return loaded.revocations;
    // Concurrent requests share one read.
    this.#loading ??= (async () => {
      const at = this.#now();
      try {
        const revocations = await this.#store.load();
        this.#loaded = { at, revocations };
        return revocations;
      } finally {
        this.#loading = undefined;
      }
    })();
    return this.#loading;
  }
}
