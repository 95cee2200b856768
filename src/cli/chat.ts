/**
 * Terminal entry point: runs one request as a dev principal and prints the
 * answer, its citations, the tool ledger and why the run stopped. The thread
 * id goes to stderr as soon as the run starts (stdout stays the run's output,
 * one JSON line with --json). A paused run shows an approval card; at a TTY
 * each action is then approved, edited or rejected at a prompt and the run
 * continues, elsewhere the card ends with the exact `--resume` command.
 *
 *   npm run chat -- --user alice "Compare self-attention with cross-attention using my notes"
 *   npm run chat -- --user alice --thread <id>            continue a thread (e.g. after a crash)
 *   npm run chat -- --user alice --thread <id> --resume '{"decisions":[{"type":"approve"}]}'
 *   npm run chat -- --user alice --idempotency-key K "…"  a repeat with K prints that run, starts nothing
 */
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { findPrincipal, loadPrincipalDirectory, type Principal } from "../auth/principal.js";
import { createRuntime } from "../bootstrap.js";
import { loadSettings } from "../env.js";
import { describeError } from "../errors.js";
import { logLine, withoutSecretShapes } from "../runtime/process-scanner.js";
import { isRunKey } from "../persistence/run-keys.js";
import { runBoundFor } from "../policy/run-bound.js";
import type { SecretScanner } from "../policy/secrets.js";
import { runConfigFor, threadConfig } from "../runtime/run-config.js";
import { runOptions } from "../runtime/routes.js";
import type { State } from "../state.js";
import { formatRun } from "./format.js";
import { approvalCard, pendingReviewOf, resumeCommand, reviewInteractively, terminalIO } from "./review.js";
import { CliError, openSession } from "./session.js";

const USAGE = `usage: npm run chat -- --user <user_id> [--thread <id>] [--case C-102] [--resume <json>] [--idempotency-key <key>] [--json] ["request"]`;

function parseOptions(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      user: { type: "string" },
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

function parseCommandLine(argv: string[]) {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    // Unknown flags and missing values are usage errors, not crashes.
    throw usage(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true as const };
  if (!values.user) throw usage("--user is required");
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
    user: values.user,
    thread: values.thread,
    caseId: values.case,
    request,
    resume,
    key,
    json: values.json,
  };
}

const CASE_ID_ONLY = /^C-[0-9]{3}$/;

type Options = Exclude<ReturnType<typeof parseCommandLine>, { help: true }>;

/** Prompts only for a person: a TTY on both ends, and not when the output is meant for a program. */
const interactive = (options: Options) =>
  !options.json && process.stdin.isTTY === true && process.stderr.isTTY === true;

async function main(): Promise<number> {
  const parsed = parseCommandLine(process.argv.slice(2));
  if (parsed.help) {
    console.log(USAGE);
    return 0;
  }
  const options = parsed;
  const settings = loadSettings();
  const principal = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), options.user);
  const runtime = createRuntime(settings);
  try {
    const database = await runtime.database();
    const session = await openSession(
      database.threads,
      principal,
      { thread: options.thread, request: options.request, resume: options.resume, caseId: options.caseId },
      options.key,
    );
    // Imported here, not at the top: graph modules read settings on import, and a
    // configuration error must reach the one-line error handler below.
    const { buildAgent } = await import("../../graphs/agent.js");
    const graph = buildAgent(runtime.host).compile({ checkpointer: database.saver });
    if (session.kind === "replay") {
      const { thread_id: threadId, run_id: runId } = session.recorded;
      process.stderr.write(
        `thread: ${threadId}  run: ${runId}  (replayed: --idempotency-key was used for this command; nothing new started)\n`,
      );
      print(options, principal, threadId, runId, true, await graph.getState(threadConfig(threadId)));
      return 0;
    }
    const tools = await runtime.host.tools();
    const contracts = tools.catalog().map((tool) => tool.contract);
    const { threadId } = session;
    process.stderr.write(`thread: ${threadId}  run: ${session.runId}\n`);
    const runBound = runBoundFor(options.request, contracts, options.caseId ? { case_id: options.caseId } : {});
    const config = (runId: string) => ({
      ...runConfigFor({ threadId, runId, principal, runBound }),
      ...runOptions(settings.budgets),
    });

    if (options.resume !== undefined) {
      await graph.invoke(
        new Command({ resume: withoutSecretShapes(options.resume, tools.secrets) }),
        config(session.runId),
      );
    } else if (options.request) {
      await graph.invoke({ messages: [new HumanMessage(options.request)] }, config(session.runId));
    } else if ((await graph.getState(threadConfig(threadId))).next.length === 0) {
      console.error(`warrant: thread ${threadId} has nothing left to run`);
    } else {
      // Continue from the last checkpoint: the run picks up at the node that was interrupted.
      await graph.invoke(null, config(session.runId));
    }
    if (interactive(options)) await reviewLoop(graph, threadId, config, tools.secrets);
    print(options, principal, threadId, session.runId, false, await graph.getState(threadConfig(threadId)));
    return 0;
  } finally {
    await runtime.close();
  }
}

type Graph = {
  invoke(input: unknown, config: unknown): Promise<unknown>;
  getState(config: unknown): Promise<Snapshot>;
};
type Snapshot = {
  values: unknown;
  next: readonly string[];
  tasks: readonly { interrupts: readonly { value?: unknown }[] }[];
};

const interruptsOf = (snapshot: Snapshot) =>
  snapshot.tasks.flatMap((task) => task.interrupts.map((item) => item.value));

/** While the run waits for review: show the card, ask per action, resume with the answers. Ends at end of input too. */
async function reviewLoop(
  graph: Graph,
  threadId: string,
  config: (runId: string) => unknown,
  secrets: SecretScanner | undefined,
): Promise<void> {
  const io = terminalIO();
  try {
    for (;;) {
      const review = pendingReviewOf(interruptsOf(await graph.getState(threadConfig(threadId))));
      if (!review) return;
      io.write(`${approvalCard(review)}\n\n`);
      const answer = await reviewInteractively(review, io);
      if (!answer) return;
      await graph.invoke(new Command({ resume: withoutSecretShapes(answer, secrets) }), config(randomUUID()));
    }
  } finally {
    io.close();
  }
}

function print(
  options: Options,
  principal: Principal,
  threadId: string,
  runId: string,
  replayed: boolean,
  snapshot: Snapshot,
): void {
  const interrupts = interruptsOf(snapshot);
  const review = pendingReviewOf(interrupts);
  const resume = review ? resumeCommand(principal.user_id, threadId, review) : undefined;
  const state = snapshot.values as Partial<State>;
  if (options.json) {
    const { status, result, termination_reason, ledger, usage: spent } = state;
    console.log(
      JSON.stringify({
        thread_id: threadId,
        run_id: runId,
        replayed,
        status,
        result,
        termination_reason,
        ledger: ledger ?? [],
        usage: spent,
        interrupts,
        ...(resume ? { resume_command: resume } : {}),
      }),
    );
  } else {
    console.log(formatRun(threadId, state, review, resume));
  }
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
