/**
 * The revocation tables (`<schema>.token_revocations`,
 * `<schema>.user_revocations`): one row per revoked token id, one "not
 * before" per user. Rows older than the longest token lifetime name only
 * expired tokens and are dropped. The in-memory lists every instance checks
 * requests against are `src/auth/revocations.ts`.
 */
import type pg from "pg";
import { MAX_API_TOKEN_TTL_SECONDS } from "../auth/api-token.js";
import { JTI_PATTERN, type Revocations, USER_ID_PATTERN } from "../auth/revocations.js";
import { ConfigError } from "../errors.js";
import { quoteSchemaName } from "../sql-names.js";

/** Revocations kept: the longest token lifetime plus a minute of clock skew. */
const KEEP = `${MAX_API_TOKEN_TTL_SECONDS + 60} seconds`;

export function revocationTables(schema: string): string[] {
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
