/**
 * Terminal entry point: runs one request as a dev principal and prints the
 * answer, its citations, the tool ledger and why the run stopped.
 *
 *   npm run chat -- --user alice "Compare self-attention with cross-attention using my notes"
 *   npm run chat -- --user alice --thread <id>            continue a thread (e.g. after a crash)
 *   npm run chat -- --user alice --thread <id> --resume '{"decisions":[{"type":"approve"}]}'
 */
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { findPrincipal, loadPrincipalDirectory } from "../auth/principal.js";
import { createRuntime } from "../bootstrap.js";
import { loadSettings } from "../env.js";
import { describeError, WarrantError } from "../errors.js";
import { runBoundFor } from "../policy/run-bound.js";
import { runConfigFor } from "../runtime/run-config.js";
import { runOptions } from "../runtime/routes.js";
import type { State } from "../state.js";
import { formatRun } from "./format.js";

const USAGE = `usage: npm run chat -- --user <user_id> [--thread <id>] [--case C-102] [--resume <json>] [--json] ["request"]`;

class UsageError extends WarrantError {
  constructor(message: string) {
    super("usage", message);
  }
}

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
      json: { type: "boolean", default: false },
      help: { type: "boolean", default: false },
    },
  });
}

function parseCommandLine(argv: string[]) {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    // Unknown flags and missing values are usage errors, not crashes.
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true as const };
  if (!values.user) throw new UsageError("--user is required");
  const request = positionals.join(" ").trim();
  if (!request && !values.thread) throw new UsageError("give a request, or --thread to continue one");
  if (request.length > 8_000) throw new UsageError("the request is longer than 8000 characters");
  if (values.thread !== undefined && !/^[A-Za-z0-9_-]{1,100}$/.test(values.thread)) throw new UsageError("--thread must be an id of letters, digits, - or _");
  let resume: unknown;
  if (values.resume !== undefined) {
    try {
      resume = JSON.parse(values.resume);
    } catch {
      throw new UsageError("--resume must be JSON");
    }
    // LangGraph treats a null resume as no input at all and fails the run.
    if (resume === null) throw new UsageError("--resume must be a review decision, not null");
  }
  if (values.case !== undefined && !CASE_ID_ONLY.test(values.case)) throw new UsageError("--case must look like C-102");
  return { help: false as const, user: values.user, thread: values.thread, caseId: values.case, request, resume, json: values.json };
}

const CASE_ID_ONLY = /^C-[0-9]{3}$/;

async function main(): Promise<number> {
  const options = parseCommandLine(process.argv.slice(2));
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  const settings = loadSettings();
  const principal = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), options.user);
  const runtime = createRuntime(settings);
  try {
    const database = await runtime.database();
    await runtime.host.tools();
    // Imported here, not at the top: graph modules read settings on import, and a
    // configuration error must reach the one-line error handler below.
    const { buildAgent } = await import("../../graphs/agent.js");
    const graph = buildAgent(runtime.host).compile({ checkpointer: database.saver });
    const threadId = options.thread ?? randomUUID();
    const contracts = (await runtime.host.tools()).catalog().map((tool) => tool.contract);
    const runBound = runBoundFor(options.request ?? "", contracts, options.caseId ? { case_id: options.caseId } : {});
    const config = { ...runConfigFor({ threadId, runId: randomUUID(), principal, runBound }), ...runOptions(settings.budgets) };
    if (options.resume !== undefined) {
      await graph.invoke(new Command({ resume: options.resume }), config);
    } else if (options.request) {
      await graph.invoke({ messages: [new HumanMessage(options.request)] }, config);
    } else {
      const snapshot = await graph.getState(config);
      if (snapshot.next.length === 0) {
        console.error(`warrant: thread ${threadId} has nothing left to run`);
      } else {
        // Continue from the last checkpoint: the run picks up at the node that was interrupted.
        await graph.invoke(null, config);
      }
    }
    const snapshot = await graph.getState(config);
    const interrupts = snapshot.tasks.flatMap((task) => task.interrupts.map((item) => item.value));
    const state = snapshot.values as State;
    if (options.json) console.log(JSON.stringify({ thread_id: threadId, status: state.status, result: state.result, termination_reason: state.termination_reason, ledger: state.ledger, usage: state.usage, interrupts }));
    else console.log(formatRun(threadId, state, interrupts));
    return 0;
  } finally {
    await runtime.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`warrant: ${describeError(error)}`);
    if ((error as { code?: unknown }).code === "usage") console.error(USAGE);
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
