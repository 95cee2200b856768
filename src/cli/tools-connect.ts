/**
 * `npm run tools -- connect SERVER`: authorizes the deployment's own identity
 * (the host's, `warrant-host`) at a server with `auth: {"type": "oauth",
 * "grant": "authorization_code"}`, so that `npm start` can list the server's
 * tools and probe it. Each run's calls still go out with the run owner's own
 * authorization (the `authorization_required` pause); this one only lists.
 *
 * It prints the authorization URL; the operator opens it in a browser, signs
 * in, consents, and pastes the address the browser is sent back to
 * (`…/oauth/callback?code=…&state=…`) at the prompt. The state is sealed to
 * the host's identity and this server, so a link made for a user does not
 * connect the host. Exit 0 when connected (or already connected); 1 on
 * `unknown_server`, `not_oauth`, a refused or expired authorization, or a
 * configuration or database error; 2 on a usage error (tools.ts).
 */
import readline from "node:readline/promises";
import { loadApiSecret } from "../auth/api-token.js";
import { createOAuthTokenStore } from "../stores/oauth-token-store.js";
import { credentialValues, type Settings } from "../env.js";
import { connectionFactory, ephemeralTokenSettings } from "../mcp/connection-factory.js";
import { openDatabase } from "../stores/open-database.js";
import { HOST_OWNER } from "../oauth/authorization.js";
import { AUTHORIZATION_TTL_MS, openState, sealState, stateKeyFrom } from "../oauth/state.js";
import type { WarrantConfig } from "../policy/config.js";
import { credentialNames } from "../oauth/config.js";
import { disconnectRefusal } from "./tools-disconnect.js";

/** Where the answer comes from: the terminal, or a test's pipe. */
export interface Prompt {
  ask(question: string): Promise<string>;
  close(): void;
}

export function terminalPrompt(): Prompt {
  const lines = readline.createInterface({ input: process.stdin, output: process.stderr });
  return { ask: (question) => lines.question(question), close: () => lines.close() };
}

const fail = (message: string) => {
  process.stderr.write(`warrant: ${message}\n`);
  return 1;
};

/** The code of a pasted callback address whose state this command sealed, or why not. */
export function codeFromCallback(pasted: string, key: Uint8Array, server: string, now: number) {
  let url: URL;
  try {
    url = new URL(pasted.trim());
  } catch {
    return { ok: false as const, message: "invalid_callback: paste the whole address, starting with http" };
  }
  const error = url.searchParams.get("error");
  if (error)
    return { ok: false as const, message: `authorization_denied: the authorization server said ${error.slice(0, 80)}` };
  const opened = openState(key, url.searchParams.get("state"), now);
  if (!opened.ok) return { ok: false as const, message: `${opened.code}: ${opened.message}` };
  if (opened.binding.user_id !== HOST_OWNER || opened.binding.server !== server)
    return { ok: false as const, message: "invalid_state: that address belongs to another authorization" };
  const code = url.searchParams.get("code");
  if (!code || code.length > 2_048) return { ok: false as const, message: "invalid_callback: the address has no code" };
  // RFC 9207: the authorization server's name, checked against the server the resource names before the code is used.
  const iss = url.searchParams.get("iss") ?? undefined;
  if (iss !== undefined && (iss.length === 0 || iss.length > 2_048))
    return { ok: false as const, message: "invalid_callback: the address's iss is empty or too long" };
  return { ok: true as const, code, ...(iss === undefined ? {} : { iss }) };
}

export async function connectHost(
  settings: Settings,
  config: WarrantConfig,
  server: string,
  prompt: Prompt = terminalPrompt(),
): Promise<number> {
  const refusal = disconnectRefusal(config, server);
  const entry = config.servers[server];
  if (refusal || !entry) {
    prompt.close();
    return fail(refusal ?? `unknown_server: the config has no server ${server}`);
  }
  const secret = await loadApiSecret({ configured: settings.server.authSecret, dataDir: settings.dataDir });
  const database = await openDatabase({
    ...(settings.databaseUrl ? { databaseUrl: settings.databaseUrl } : {}),
    dataDir: settings.dataDir,
  });
  const connection = connectionFactory(ephemeralTokenSettings(), {
    store: createOAuthTokenStore(database.pool, database.schema, secret),
    credentials: credentialValues(credentialNames(config.servers)),
  })(server, entry, { down: () => undefined, suspect: () => undefined, toolsChanged: () => undefined });
  const key = stateKeyFrom(secret);
  try {
    const state = sealState(key, {
      thread_id: "host-listing",
      user_id: HOST_OWNER,
      tenant: "deployment",
      server,
      expires_at: Date.now() + AUTHORIZATION_TTL_MS,
    });
    const url = await connection.authorizationFor?.(HOST_OWNER, state);
    if (url === undefined) {
      process.stdout.write(`${server}: already connected for listing\n`);
      return 0;
    }
    process.stdout.write(
      `Connect ${server} for listing: open this address in a browser, sign in and consent:\n${url}\n`,
    );
    const pasted = await prompt.ask("then paste the address the browser was sent back to: ");
    const answer = codeFromCallback(pasted, key, server, Date.now());
    if (!answer.ok) return fail(answer.message);
    await connection.completeAuthorization?.(HOST_OWNER, answer.code, state, answer.iss);
    process.stdout.write(`${server}: connected for listing (npm start lists its tools now)\n`);
    return 0;
  } catch (error) {
    return fail(`authorization_failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    prompt.close();
    await connection.shutdown().catch(() => undefined);
    await database.close();
  }
}
