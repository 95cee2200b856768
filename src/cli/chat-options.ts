/** The chat command line: flags, the request, and the usage errors (exit 2). */
import { parseArgs } from "node:util";
import { isRunKey } from "../stores/run-keys.js";
import { CliError } from "../errors.js";

export const USAGE =
  "usage: npm run chat -- (--user <user_id> | --token <token>) [--thread <id>] [--case C-102] " +
  '[--resume <json>] [--idempotency-key <key>] [--json] ["request"]';

function parseOptions(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      user: { type: "string" },
      /** A token from the identity provider (`npm run token -- --device`); also WARRANT_TOKEN. Needs a running server. */
      token: { type: "string" },
      thread: { type: "string" },
      case: { type: "string" },
      resume: { type: "string" },
      "idempotency-key": { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
}

const usage = (message: string) => new CliError("usage", message);

export function parseCommandLine(argv: string[], environmentToken?: string) {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    // Unknown flags and missing values are usage errors, not crashes.
    throw usage(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true as const };
  const token = values.token ?? environmentToken;
  if (values.user !== undefined && values.token !== undefined) throw usage("give --user or --token, not both");
  if (token !== undefined && !/^[\x21-\x7e]{1,12288}$/.test(token))
    throw usage("--token must be one token: printable ASCII without spaces");
  if (!values.user && token === undefined) throw usage("--user is required");
  const request = positionals.join(" ").trim();
  if (!request && !values.thread) throw usage("give a request, or --thread to continue one");
  if (request.length > 8_000) throw usage("the request is longer than 8000 characters");
  // An id of this alphabet is looked up (an unknown or foreign one is thread_not_found); anything else cannot be one.
  if (values.thread !== undefined && !/^[A-Za-z0-9_-]{1,100}$/.test(values.thread))
    throw usage("--thread must be an id of letters, digits, - or _");
  const key = values["idempotency-key"];
  if (key !== undefined && !isRunKey(key))
    throw usage("--idempotency-key must be 1–255 printable ASCII characters, without leading or trailing spaces");
  let resume: unknown;
  if (values.resume !== undefined) {
    try {
      resume = JSON.parse(values.resume);
    } catch {
      throw usage("--resume must be JSON");
    }
    // LangGraph treats a null resume as no input at all and fails the run.
    if (resume === null) throw usage("--resume must be a review decision, not null");
  }
  if (values.case !== undefined && !CASE_ID_ONLY.test(values.case)) throw usage("--case must look like C-102");
  return {
    help: false as const,
    /** Absent with a token: the server says who the token is. */
    user: values.user,
    token: values.user === undefined ? token : undefined,
    thread: values.thread,
    caseId: values.case,
    request,
    resume,
    key,
    json: values.json,
  };
}

const CASE_ID_ONLY = /^C-[0-9]{3}$/;

export type Options = Exclude<ReturnType<typeof parseCommandLine>, { help: true }>;

/** Prompts only for a person: a TTY on both ends, and not when the output is meant for a program. */
export const interactive = (options: Options) =>
  !options.json && process.stdin.isTTY === true && process.stderr.isTTY === true;
