/**
 * `npm run chat` with no server running: the graph runs in this process on
 * the database it opens itself. The thread row gets the status an API run
 * would leave (`interrupted` with `graph_id` while a review is pending), so
 * the reviewer inbox lists what the CLI paused.
 */
import { randomUUID } from "node:crypto";
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import type { Principal } from "../auth/principal.js";
import { createRuntime } from "../bootstrap.js";
import type { Settings } from "../env.js";
import type { Database } from "../stores/open-database.js";
import { recordThreadStatus } from "../stores/thread-status.js";
import { loadConfig } from "../policy/config.js";
import { runBoundFor } from "../policy/run-bound.js";
import { withoutSecretShapes } from "../secrets/process-scanner.js";
import { runOptions } from "../graph/routes.js";
import { runConfigFor, threadConfig } from "../run-config.js";
import type { SecretScanner } from "../secrets/scanner.js";
import { inspectThread } from "../server/runs/outcome.js";
import type { ServedGraph } from "../server/runs/types.js";
import { interactive, type Options } from "./chat-options.js";
import { interruptsOf, printRun, warrantRunOf, type Snapshot } from "./chat-output.js";
import { approvalCard, pendingReviewOf, reviewInteractively, terminalIO } from "./review.js";
import { openSession, ownerOf } from "./session.js";
import { CliError } from "../errors.js";

/** Where the run is, for the Ctrl-C handler. */
export interface Progress {
  thread(threadId: string): void;
}

type Graph = {
  invoke(input: unknown, config: unknown): Promise<unknown>;
  getState(config: unknown): Promise<Snapshot>;
};

const GRAPH_ID = "agent";

export async function chatLocally(
  options: Options,
  settings: Settings,
  principal: Principal,
  progress: Progress,
): Promise<number> {
  const runtime = createRuntime(settings);
  try {
    const database = await runtime.database();
    // The configuration is read before a thread is opened or announced: a bad config fails first, alone
    // (read, not served: a replay below still starts no MCP server).
    await loadConfig(settings.configPath);
    const session = await openSession(
      database.threads,
      principal,
      { thread: options.thread, request: options.request, resume: options.resume, caseId: options.caseId },
      options.key,
    );
    // Imported here, not at the top: graph modules read settings on import, and a
    // configuration error must reach the one-line error handler.
    const { buildAgent } = await import("../../graphs/agent.js");
    const graph = buildAgent(runtime.host).compile({ checkpointer: database.saver }) as unknown as Graph;
    if (session.kind === "replay") {
      const { thread_id: threadId, run_id: runId } = session.recorded;
      progress.thread(threadId);
      process.stderr.write(
        `thread: ${threadId}  run: ${runId}  (replayed: --idempotency-key was used for this command; nothing new started)\n`,
      );
      printRun(options, principal.user_id, threadId, runId, true, await graph.getState(threadConfig(threadId)));
      return 0;
    }
    const { threadId } = session;
    progress.thread(threadId);
    const before = await graph.getState(threadConfig(threadId));
    if (options.resume !== undefined && interruptsOf(before).length === 0) {
      if (options.key !== undefined)
        await database.threads.runKeys.release(ownerOf(principal), options.key, session.runId);
      throw new CliError("no_pending_interrupt", `thread ${threadId} has no pending review to resume`);
    }
    // A new request starts a Warrant run with this id; a resume or a continuation goes on with the thread's run.
    const runId = options.request ? session.runId : (warrantRunOf(before) ?? session.runId);
    process.stderr.write(`thread: ${threadId}  run: ${runId}\n`);
    const tools = await runtime.host.tools();
    const contracts = tools.catalog().map((tool) => tool.contract);
    const runBound = runBoundFor(options.request, contracts, options.caseId ? { case_id: options.caseId } : {});
    const config = (id: string) => ({
      ...runConfigFor({ threadId, runId: id, principal, runBound }),
      ...runOptions(settings.budgets),
    });
    const recordStatus = () => recordStatusOf(database, graph, principal, threadId);

    if (options.resume !== undefined) {
      await graph.invoke(
        new Command({ resume: withoutSecretShapes(options.resume, tools.secrets) }),
        config(session.runId),
      );
    } else if (options.request) {
      await graph.invoke({ messages: [new HumanMessage(options.request)] }, config(session.runId));
    } else if (before.next.length === 0) {
      console.error(`warrant: thread ${threadId} has nothing left to run`);
    } else {
      // Continue from the last checkpoint: the run picks up at the node that was interrupted.
      await graph.invoke(null, config(session.runId));
    }
    await recordStatus();
    if (interactive(options)) await reviewLoop(graph, threadId, config, recordStatus, tools.secrets);
    printRun(options, principal.user_id, threadId, runId, false, await graph.getState(threadConfig(threadId)));
    return 0;
  } finally {
    await runtime.close();
  }
}

/** The thread row's status and kept values as an API run would leave them. */
async function recordStatusOf(database: Database, graph: Graph, principal: Principal, threadId: string) {
  const inspected = await inspectThread(new Map([[GRAPH_ID, graph as unknown as ServedGraph]]), GRAPH_ID, threadId);
  await recordThreadStatus(database.pool, database.schema, ownerOf(principal), threadId, {
    status: inspected.thread,
    graphId: GRAPH_ID,
    values: inspected.values,
  });
}

/** While the run waits for review: show the card, ask per action, resume with the answers. Ends at end of input too. */
async function reviewLoop(
  graph: Graph,
  threadId: string,
  config: (runId: string) => unknown,
  recordStatus: () => Promise<void>,
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
      await recordStatus();
    }
  } finally {
    io.close();
  }
}
