/**
 * `npm run tools -- disconnect SERVER --user ID`: forgets the OAuth tokens
 * (and any authorization in progress) that owner ID holds for SERVER, a
 * server of the config with `auth: {"type": "oauth", "grant":
 * "authorization_code"}`. The row goes from the encrypted store
 * (src/stores/oauth-token-store.ts), which every call reads, so the owner's
 * next call to that server asks them to authorize again, in a running server
 * too. Exit 0 when a token was removed; 1 on `unknown_server`, `not_oauth`
 * (the server keeps nothing per user), `not_connected` (nothing stored for
 * that owner) or a configuration or database error; 2 on a usage error.
 */
import { USER_ID_PATTERN } from "../auth/revocations.js";
import { loadApiSecret } from "../auth/api-token.js";
import { createOAuthTokenStore } from "../stores/oauth-token-store.js";
import type { Settings } from "../env.js";
import { openDatabase } from "../stores/open-database.js";
import type { WarrantConfig } from "../policy/config.js";

/** Why `disconnect` refused, before touching the database. */
export function disconnectRefusal(config: WarrantConfig, server: string): string | undefined {
  const entry = Object.hasOwn(config.servers, server) ? config.servers[server] : undefined;
  if (!entry) return `unknown_server: the config has no server ${server}`;
  if (!("auth" in entry) || entry.auth?.grant !== "authorization_code")
    return `not_oauth: server ${server} does not use the OAuth authorization_code grant; no tokens are stored per user`;
  return undefined;
}

export const validUserId = (user: string) => USER_ID_PATTERN.test(user);

export async function disconnect(settings: Settings, config: WarrantConfig, server: string, user: string) {
  const refusal = disconnectRefusal(config, server);
  if (refusal) {
    process.stderr.write(`warrant: ${refusal}\n`);
    return 1;
  }
  const secret = await loadApiSecret({ configured: settings.server.authSecret, dataDir: settings.dataDir });
  const database = await openDatabase({
    ...(settings.databaseUrl ? { databaseUrl: settings.databaseUrl } : {}),
    dataDir: settings.dataDir,
  });
  try {
    const removed = await createOAuthTokenStore(database.pool, database.schema, secret).remove(user, server);
    if (!removed) {
      process.stderr.write(`warrant: not_connected: ${user} has no stored authorization for server ${server}\n`);
      return 1;
    }
    process.stdout.write(`${server}: disconnected ${user} (stored tokens removed; the next call asks again)\n`);
    return 0;
  } finally {
    await database.close();
  }
}
