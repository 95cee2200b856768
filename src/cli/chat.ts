/**
 * Terminal entry point: runs one request as a dev principal and prints the
 * answer, its citations, the tool ledger and why the run stopped. While
 * `npm start` of this checkout runs, the CLI is a client of its API (a token
 * minted for `--user`; chat-remote.ts); otherwise it runs the graph in this
 * process on the database it opens (chat-local.ts). The output is the same.
 * The thread id goes to stderr as soon as the run starts (stdout stays the
 * run's output, one JSON line with --json). A paused run shows an approval
 * card; at a TTY each action is then approved, edited or rejected at a
 * prompt and the run continues, elsewhere the card ends with the exact
 * `--resume` command. Ctrl-C prints the thread and the command that
 * continues it (exit 130).
 *
 *   npm run chat -- --user alice "Compare self-attention with cross-attention using my notes"
 *   npm run chat -- --user alice --thread <id>            continue a thread (e.g. after a crash)
 *   npm run chat -- --user alice --thread <id> --resume '{"decisions":[{"type":"approve"}]}'
 *   npm run chat -- --user alice --idempotency-key K "…"  a repeat with K prints that run, starts nothing
 *   npm run chat -- --token "$WARRANT_TOKEN" "…"             as the identity provider's user (a running server only)
 */
import { findPrincipal, loadPrincipalDirectory } from "../auth/principal.js";
import { loadSettings } from "../env.js";
import { describeError, CliError } from "../errors.js";
import { logLine } from "../secrets/process-scanner.js";
import { chatLocally } from "./chat-local.js";
import { parseCommandLine, USAGE } from "./chat-options.js";
import { interruptedLines } from "./chat-output.js";
import { chatRemotely, principalOfToken } from "./chat-remote.js";
import { findServer } from "./server-client.js";

/** What Ctrl-C needs to know: whose thread, and how to stop a run going on the server. */
const progress: { user?: string; threadId?: string; cancel?: (() => Promise<void>) | undefined } = {};

/** Exit status of a process ended by SIGINT, as shells report it. */
const INTERRUPTED_EXIT = 130;
const CANCEL_WAIT_MS = 3_000;

process.on("SIGINT", () => {
  if (progress.user && progress.threadId) process.stderr.write(interruptedLines(progress.user, progress.threadId));
  else process.stderr.write("warrant: interrupted before a thread was started\n");
  const cancel = progress.cancel?.().catch(() => undefined);
  const timeout = new Promise((resolve) => setTimeout(resolve, CANCEL_WAIT_MS).unref());
  void Promise.race([cancel, timeout]).finally(() => process.exit(INTERRUPTED_EXIT));
});

async function main(): Promise<number> {
  const settings = loadSettings();
  const parsed = parseCommandLine(process.argv.slice(2), settings.server.token);
  if (parsed.help) {
    console.log(USAGE);
    return 0;
  }
  const options = parsed;
  const server = await findServer(settings);
  // A token (an identity provider's) is for a running server, which says whose it is.
  if (options.token !== undefined && !server)
    throw new CliError("unsupported", "--token (or WARRANT_TOKEN) needs a running server (npm start)");
  const principal =
    options.user !== undefined
      ? findPrincipal(await loadPrincipalDirectory(settings.principalsPath), options.user)
      : await principalOfToken(server ?? "", options.token ?? "");
  progress.user = principal.user_id;
  const onThread = (threadId: string) => {
    progress.threadId = threadId;
  };
  if (server)
    return chatRemotely(server, options, settings, principal, {
      thread: onThread,
      running: (cancel) => {
        progress.cancel = cancel;
      },
    });
  return chatLocally(options, settings, principal, { thread: onThread });
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(logLine(`warrant: ${describeError(error)}`));
    const code = (error as { code?: unknown }).code;
    if (code === "usage") console.error(USAGE);
    process.exit(code === "usage" ? 2 : 1);
  },
);
