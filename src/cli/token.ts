/**
 * `npm run token -- --user alice [--ttl 3600]`: mints an API bearer token for
 * a dev principal with the server's secret. The token alone is the last line
 * of stdout, so `TOKEN=$(npm run -s token -- --user alice | tail -n 1)` works;
 * its id (`jti`) goes to stderr.
 *
 * `--device [--issuer URL]` signs in with the organization's identity
 * provider (`auth.oidc`) through the device authorization grant: the URL and
 * code to confirm go to stderr, the provider's token to stdout, for
 * `WARRANT_TOKEN` or the page's paste box.
 *
 * `--revoke <jti>` revokes one token, `--revoke-user <id>` every token of a
 * user issued until now, in the server's database (every instance on it
 * refuses them within about a second: src/auth/revocations.ts).
 */
import { parseArgs } from "node:util";
import { decodeJwt } from "jose";
import {
  loadApiSecret,
  mintApiToken,
  DEFAULT_API_TOKEN_TTL_SECONDS,
  MAX_API_TOKEN_TTL_SECONDS,
} from "../auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory } from "../auth/principal.js";
import { JTI_PATTERN, USER_ID_PATTERN } from "../auth/revocations.js";
import { createRevocationStore, type RevocationStore } from "../stores/revocation-store.js";
import { loadSettings } from "../env.js";
import { loadConfig } from "../policy/config.js";
import { deviceIssuer, deviceSignIn } from "./device-sign-in.js";
import { openDatabase } from "../stores/open-database.js";
import { exitOnConfigError } from "./config-errors.js";
import { CliError } from "../errors.js";
import { TOKEN_USAGE as USAGE } from "./usage.js";

type Values = {
  user?: string | undefined;
  ttl?: string | undefined;
  revoke?: string | undefined;
  "revoke-user"?: string | undefined;
  device?: boolean | undefined;
  issuer?: string | undefined;
  help?: boolean | undefined;
};

function usage(message: string): number {
  process.stderr.write(`warrant: usage: ${message}\n${USAGE}\n`);
  return 2;
}

async function main(argv: string[]): Promise<number> {
  let values: Values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        user: { type: "string" },
        ttl: { type: "string" },
        revoke: { type: "string" },
        "revoke-user": { type: "string" },
        device: { type: "boolean" },
        issuer: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (error) {
    return usage((error as Error).message);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const commands = [values.user, values.revoke, values["revoke-user"]].filter((value) => value !== undefined);
  if (commands.length > 1) return usage("give one of --user, --revoke, --revoke-user");
  if (values.device && commands.length > 0) return usage("--device goes alone (the provider says who you are)");
  if (values.issuer !== undefined && !values.device) return usage("--issuer goes with --device only");
  if (values.device) {
    if (values.ttl !== undefined) return usage("the provider sets the lifetime of its tokens; --ttl goes with --user");
    return signInOnDevice(values.issuer);
  }
  if (values.revoke !== undefined) {
    if (values.ttl !== undefined) return usage("--ttl goes with --user only");
    const jti = values.revoke;
    if (!JTI_PATTERN.test(jti)) return usage("--revoke takes a token id (jti): 1-64 of A-Z a-z 0-9 . _ : -");
    return withRevocations(async (store) => {
      await store.revokeToken(jti);
      process.stdout.write(`revoked token ${jti}\n`);
    });
  }
  if (values["revoke-user"] !== undefined) {
    if (values.ttl !== undefined) return usage("--ttl goes with --user only");
    const user = values["revoke-user"];
    if (!USER_ID_PATTERN.test(user)) return usage("--revoke-user takes a user id: 1-64 of a-z 0-9 _ -");
    return withRevocations(async (store) => {
      const notBefore = await store.revokeUser(user);
      process.stdout.write(
        `revoked every token of ${user} issued before ${new Date(notBefore * 1000).toISOString()}\n`,
      );
    });
  }
  if (!values.user) return usage("--user is required");
  const ttl = values.ttl === undefined ? DEFAULT_API_TOKEN_TTL_SECONDS : Number(values.ttl);
  if (!/^[0-9]+$/.test(values.ttl ?? "1") || !Number.isInteger(ttl) || ttl < 1 || ttl > MAX_API_TOKEN_TTL_SECONDS) {
    process.stderr.write(`warrant: usage: --ttl must be an integer in 1..${MAX_API_TOKEN_TTL_SECONDS}\n`);
    return 2;
  }
  const user = values.user;
  return exitOnConfigError(async () => {
    const settings = loadSettings();
    const principal = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), user);
    const secret = await loadApiSecret({ configured: settings.server.authSecret, dataDir: settings.dataDir });
    const token = await mintApiToken(secret, principal, { ttlSeconds: ttl });
    process.stderr.write(`token id (revoke with --revoke): ${String(decodeJwt(token).jti)}\n`);
    process.stdout.write(`${token}\n`);
    return 0;
  });
}

/** The device authorization grant against the configured identity provider. */
function signInOnDevice(issuerUrl: string | undefined): Promise<number> {
  return exitOnConfigError(async () => {
    const settings = loadSettings();
    try {
      const issuer = deviceIssuer((await loadConfig(settings.configPath)).auth.oidc, issuerUrl);
      const token = await deviceSignIn(issuer, (prompt) => {
        process.stderr.write(
          `To sign in, open ${prompt.verification_uri} and enter the code ${prompt.user_code}\n` +
            (prompt.verification_uri_complete ? `(or open ${prompt.verification_uri_complete})\n` : ""),
        );
      });
      process.stdout.write(`${token}\n`);
      return 0;
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      process.stderr.write(`warrant: ${error.code}: ${error.message}\n`);
      return 1;
    }
  });
}

/** Runs `work` on the server's database (its setup creates the revocation tables). */
function withRevocations(work: (store: RevocationStore) => Promise<void>): Promise<number> {
  return exitOnConfigError(async () => {
    const settings = loadSettings();
    const database = await openDatabase({
      ...(settings.databaseUrl ? { databaseUrl: settings.databaseUrl } : {}),
      dataDir: settings.dataDir,
      pool: { max: 1, waitMs: settings.pool.waitMs },
    });
    try {
      await work(createRevocationStore(database.pool, database.schema));
    } finally {
      await database.close();
    }
    return 0;
  });
}

process.exitCode = await main(process.argv.slice(2));
