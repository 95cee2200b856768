/**
 * Revoked API tokens, in Postgres (`<schema>.token_revocations`,
 * `<schema>.user_revocations`), shared by every instance on the database:
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
import type pg from "pg";
import { ConfigError } from "../errors.js";
import { quoteSchemaName } from "../persistence/ledger-store.js";
import { MAX_API_TOKEN_TTL_SECONDS } from "./api-token.js";

/** A token id as `mintApiToken` writes it (a UUID), or any other issuer's within the claim's bounds. */
export const JTI_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;
/** A user id as the principal directory spells it. */
export const USER_ID_PATTERN = /^[a-z0-9_-]{1,64}$/;
/** How old the in-memory lists may be before a request reads them again. */
export const REVOCATION_REFRESH_MS = 1_000;
/** Revocations kept: the longest token lifetime plus a minute of clock skew. */
const KEEP = `${MAX_API_TOKEN_TTL_SECONDS + 60} seconds`;

export function revocationMigrations(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create table if not exists ${s}.token_revocations (
      jti text primary key,
      revoked_at timestamptz not null default now()
    )`,
    `create table if not exists ${s}.user_revocations (
      user_id text primary key,
      not_before timestamptz not null
    )`,
  ];
}

export interface Revocations {
  /** Token ids revoked. */
  tokens: ReadonlySet<string>;
  /** Per user: tokens issued before this second (epoch seconds) are refused. */
  notBefore: ReadonlyMap<string, number>;
}

export interface RevocationStore {
  /** Revokes one token by id; revoking it again changes nothing. */
  revokeToken(jti: string): Promise<void>;
  /** Refuses every token of `userId` issued up to now; returns the new "not before" (epoch seconds). */
  revokeUser(userId: string): Promise<number>;
  /** The revocations still relevant (younger than the longest token lifetime). */
  load(): Promise<Revocations>;
}

export function createRevocationStore(pool: pg.Pool, schema: string): RevocationStore {
  const s = quoteSchemaName(schema);
  return {
    async revokeToken(jti) {
      if (!JTI_PATTERN.test(jti)) throw new ConfigError("config_invalid", "a token id is 1-64 of A-Z a-z 0-9 . _ : -");
      await pool.query(`delete from ${s}.token_revocations where revoked_at < now() - $1::interval`, [KEEP]);
      await pool.query(`insert into ${s}.token_revocations (jti) values ($1) on conflict (jti) do nothing`, [jti]);
    },
    async revokeUser(userId) {
      if (!USER_ID_PATTERN.test(userId)) throw new ConfigError("config_invalid", "a user id is 1-64 of a-z 0-9 _ -");
      await pool.query(`delete from ${s}.user_revocations where not_before < now() - $1::interval`, [KEEP]);
      // Tokens carry whole seconds (iat): "not before" is the next whole second, so one issued in this second is refused too.
      const result = await pool.query<{ not_before: string }>(
        `insert into ${s}.user_revocations (user_id, not_before)
         values ($1, date_trunc('second', now()) + interval '1 second')
         on conflict (user_id) do update set not_before = greatest(${s}.user_revocations.not_before, excluded.not_before)
         returning extract(epoch from not_before)::bigint::text as not_before`,
        [userId],
      );
      return Number(result.rows[0]?.not_before);
    },
    async load() {
      const [tokens, users] = await Promise.all([
        pool.query<{ jti: string }>(`select jti from ${s}.token_revocations where revoked_at >= now() - $1::interval`, [
          KEEP,
        ]),
        pool.query<{ user_id: string; not_before: string }>(
          `select user_id, extract(epoch from not_before)::bigint::text as not_before
           from ${s}.user_revocations where not_before >= now() - $1::interval`,
          [KEEP],
        ),
      ]);
      return {
        tokens: new Set(tokens.rows.map((row) => row.jti)),
        notBefore: new Map(users.rows.map((row) => [row.user_id, Number(row.not_before)])),
      };
    },
  };
}

/** What a request's token is checked by: who, which token, when it was issued (epoch seconds). */
export interface TokenIdentity {
  user_id: string;
  jti: string;
  issued_at: number;
}

/** The revocation lists of one instance, read again when older than `refreshMs`. */
export class RevocationList {
  #store: Pick<RevocationStore, "load">;
  #refreshMs: number;
  #now: () => number;
  #loaded: { at: number; revocations: Revocations } | undefined;
  #loading: Promise<Revocations> | undefined;

  constructor(store: Pick<RevocationStore, "load">, options: { refreshMs?: number; now?: () => number } = {}) {
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
