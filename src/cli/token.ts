/**
 * `npm run token -- --user alice [--ttl 3600]`: mints an API bearer token for
 * a dev principal with the server's secret. The token alone is the last line
 * of stdout, so `TOKEN=$(npm run -s token -- --user alice | tail -n 1)` works.
 */
import { parseArgs } from "node:util";
import {
  loadApiSecret,
  mintApiToken,
  DEFAULT_API_TOKEN_TTL_SECONDS,
  MAX_API_TOKEN_TTL_SECONDS,
} from "../auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory } from "../auth/principal.js";
import { loadSettings } from "../env.js";
import { exitOnConfigError } from "./config-errors.js";

const USAGE = `usage: npm run token -- --user <id> [--ttl <seconds>]
  Mints a bearer token for a dev principal (src/domains/dev-principals.json).
  --ttl  lifetime in seconds, 1..${MAX_API_TOKEN_TTL_SECONDS} (default ${DEFAULT_API_TOKEN_TTL_SECONDS})`;

async function main(argv: string[]): Promise<number> {
  let values: { user?: string | undefined; ttl?: string | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { user: { type: "string" }, ttl: { type: "string" }, help: { type: "boolean", short: "h" } },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`warrant: usage: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!values.user) {
    process.stderr.write(`warrant: usage: --user is required\n${USAGE}\n`);
    return 2;
  }
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
    process.stdout.write(`${token}\n`);
    return 0;
  });
}

process.exitCode = await main(process.argv.slice(2));
