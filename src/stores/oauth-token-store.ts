/**
 * OAuth credentials of third-party MCP servers, in Postgres, encrypted at
 * rest (DESIGN §13): per (owner, server) the tokens
 * (`<schema>.oauth_credentials`), per authorization in progress its PKCE
 * verifier (`<schema>.oauth_verifiers`, one row per link, so an owner may
 * have several out at once; dropped when used and once older than a link
 * lives), per server the dynamic client registration (`<schema>.oauth_clients`).
 * Each row is sealed with AES-256-GCM under a key derived with HKDF-SHA256
 * from the deployment secret (the API signing secret, `WARRANT_AUTH_SECRET`);
 * the owner, server (and authorization) are the additional authenticated
 * data, so a row copied to another owner or server does not open. Nothing
 * here logs a value.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type pg from "pg";
import { z } from "zod";
import type { OAuthCredentialStore, OwnerCredentials } from "../oauth/provider.js";
import { quoteSchemaName } from "../sql-names.js";

const KEY_INFO = "warrant/oauth-credentials/v1";
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** A sealed row is at most this large (tokens are small; a bigger one is refused, not stored). */
const MAX_PLAINTEXT_BYTES = 64 * 1024;

/** The 32-byte AES key for OAuth credentials, derived from the deployment secret. */
export function oauthKeyFrom(secret: Uint8Array): Buffer {
  return Buffer.from(hkdfSync("sha256", Buffer.from(secret), Buffer.alloc(0), KEY_INFO, 32));
}

/** AES-256-GCM: version byte, IV, tag, ciphertext; `aad` binds the row to its owner and server. */
export function seal(key: Buffer, plaintext: string, aad: string): Buffer {
  const data = Buffer.from(plaintext, "utf8");
  if (data.length > MAX_PLAINTEXT_BYTES) throw new Error("OAuth credentials too large to store");
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const body = Buffer.concat([cipher.update(data), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

/** Opens a sealed value; throws on a wrong key, a wrong owner or server, or any tampering. */
export function open(key: Buffer, sealed: Buffer, aad: string): string {
  if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== VERSION)
    throw new Error("unreadable OAuth credentials");
  const iv = sealed.subarray(1, 1 + IV_BYTES);
  const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAAD(Buffer.from(aad, "utf8"));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
}

export function oauthCredentialTables(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create table if not exists ${s}.oauth_credentials (
      owner text not null,
      server text not null,
      sealed bytea not null,
      updated_at timestamptz not null default now(),
      primary key (owner, server)
    )`,
    `create table if not exists ${s}.oauth_clients (
      server text primary key,
      sealed bytea not null,
      updated_at timestamptz not null default now()
    )`,
    `create table if not exists ${s}.oauth_verifiers (
      owner text not null,
      server text not null,
      authorization_id text not null,
      sealed bytea not null,
      created_at timestamptz not null default now(),
      primary key (owner, server, authorization_id)
    )`,
  ];
}

/** What a stored row may hold: validated on the way out (a row is a boundary too). */
const CredentialsSchema = z
  .object({
    tokens: z.object({ access_token: z.string(), token_type: z.string() }).passthrough().optional(),
    // Rows written before verifiers had a table of their own may still carry one: read, never used.
    code_verifier: z.string().max(256).optional(),
  })
  .strict()
  .transform(({ tokens }) => (tokens ? { tokens } : {}));
const VerifierSchema = z.string().min(1).max(256);
/** A verifier is kept a minute longer than its link lives (`AUTHORIZATION_TTL_MS`, 10 minutes), then dropped. */
const VERIFIER_KEEP = "11 minutes";
const ClientSchema = z.object({ client_id: z.string() }).passthrough();

const aadOf = (owner: string, server: string) => JSON.stringify(["credentials", owner, server]);
const clientAad = (server: string) => JSON.stringify(["client", server]);
const verifierAad = (owner: string, server: string, authorization: string) =>
  JSON.stringify(["verifier", owner, server, authorization]);

/** The Postgres store of OAuth credentials (sealed); `secret` is the deployment secret. */
export function createOAuthTokenStore(pool: pg.Pool, schema: string, secret: Uint8Array): OAuthCredentialStore {
  const s = quoteSchemaName(schema);
  const key = oauthKeyFrom(secret);
  return {
    async load(owner, server): Promise<OwnerCredentials> {
      const { rows } = await pool.query<{ sealed: Buffer }>(
        `select sealed from ${s}.oauth_credentials where owner = $1 and server = $2`,
        [owner, server],
      );
      const row = rows[0];
      if (!row) return {};
      return CredentialsSchema.parse(JSON.parse(open(key, row.sealed, aadOf(owner, server))));
    },
    async save(owner, server, credentials) {
      const sealed = seal(key, JSON.stringify(credentials), aadOf(owner, server));
      await pool.query(
        `insert into ${s}.oauth_credentials (owner, server, sealed) values ($1, $2, $3)
         on conflict (owner, server) do update set sealed = excluded.sealed, updated_at = now()`,
        [owner, server, sealed],
      );
    },
    async remove(owner, server) {
      // Disconnect: the owner's tokens and every authorization of theirs in progress on this server.
      const deleted = await pool.query(`delete from ${s}.oauth_credentials where owner = $1 and server = $2`, [
        owner,
        server,
      ]);
      const links = await pool.query(`delete from ${s}.oauth_verifiers where owner = $1 and server = $2`, [
        owner,
        server,
      ]);
      return (deleted.rowCount ?? 0) + (links.rowCount ?? 0) > 0;
    },
    async forgetTokens(owner, server) {
      // An authorization in progress keeps the owner's row (without tokens); with none, the row goes.
      await pool.query(
        `delete from ${s}.oauth_credentials where owner = $1 and server = $2 and not exists (
           select 1 from ${s}.oauth_verifiers v
           where v.owner = $1 and v.server = $2 and v.created_at >= now() - $3::interval)`,
        [owner, server, VERIFIER_KEEP],
      );
      await pool.query(
        `update ${s}.oauth_credentials set sealed = $3, updated_at = now() where owner = $1 and server = $2`,
        [owner, server, seal(key, JSON.stringify({}), aadOf(owner, server))],
      );
    },
    async saveVerifier(owner, server, authorization, verifier) {
      const sealed = seal(
        key,
        JSON.stringify(VerifierSchema.parse(verifier)),
        verifierAad(owner, server, authorization),
      );
      await pool.query(`delete from ${s}.oauth_verifiers where created_at < now() - $1::interval`, [VERIFIER_KEEP]);
      await pool.query(
        `insert into ${s}.oauth_verifiers (owner, server, authorization_id, sealed) values ($1, $2, $3, $4)
         on conflict (owner, server, authorization_id) do update set sealed = excluded.sealed, created_at = now()`,
        [owner, server, authorization, sealed],
      );
      // The owner's row says a connection exists or is under way (what `disconnect` finds and forgets).
      await pool.query(
        `insert into ${s}.oauth_credentials (owner, server, sealed) values ($1, $2, $3)
         on conflict (owner, server) do nothing`,
        [owner, server, seal(key, JSON.stringify({}), aadOf(owner, server))],
      );
    },
    async loadVerifier(owner, server, authorization) {
      const { rows } = await pool.query<{ sealed: Buffer }>(
        `select sealed from ${s}.oauth_verifiers
         where owner = $1 and server = $2 and authorization_id = $3 and created_at >= now() - $4::interval`,
        [owner, server, authorization, VERIFIER_KEEP],
      );
      const row = rows[0];
      if (!row) return undefined;
      return VerifierSchema.parse(JSON.parse(open(key, row.sealed, verifierAad(owner, server, authorization))));
    },
    async removeVerifier(owner, server, authorization) {
      await pool.query(`delete from ${s}.oauth_verifiers where owner = $1 and server = $2 and authorization_id = $3`, [
        owner,
        server,
        authorization,
      ]);
    },
    async loadClient(server) {
      const { rows } = await pool.query<{ sealed: Buffer }>(`select sealed from ${s}.oauth_clients where server = $1`, [
        server,
      ]);
      const row = rows[0];
      return row ? ClientSchema.parse(JSON.parse(open(key, row.sealed, clientAad(server)))) : undefined;
    },
    async saveClient(server, client) {
      if (!client) {
        await pool.query(`delete from ${s}.oauth_clients where server = $1`, [server]);
        return;
      }
      await pool.query(
        `insert into ${s}.oauth_clients (server, sealed) values ($1, $2)
         on conflict (server) do update set sealed = excluded.sealed, updated_at = now()`,
        [server, seal(key, JSON.stringify(client), clientAad(server))],
      );
    },
  };
}
