/**
 * `npx tsx bench/perf-probe.ts`: what one tool step costs in Postgres, for the
 * engineer changing the core (the side-by-side instrument is `npm run bench`).
 *
 * Runs scripted threads of N tool steps (one `search_notes` call a step,
 * then a final answer) on a scratch database of the Postgres server
 * (`DATABASE_URL`, default the local server), through the real agent graph
 * and the real notes MCP server, and prints per tool step, as the difference
 * between an N=5 and an N=20 run divided by 15:
 * - statements and transactions, counted on the client (every `query` on a
 *   `pg.Client`; a transaction is a BEGIN..COMMIT block or one statement
 *   outside one), and transactions again from `pg_stat_database.xact_commit`
 *   (read after the pool is closed, so every backend has flushed its stats);
 * - wall time;
 * - checkpoint bytes of a 50-step thread and bytes added by its 50th step
 *   (a 49-step thread's total subtracted), summed over LangGraph's three
 *   tables (blob and JSON lengths, before TOAST compression).
 */
import { randomUUID } from "node:crypto";
import os from "node:os";
import { HumanMessage } from "@langchain/core/messages";
import pg from "pg";
import { buildAgent } from "../graphs/agent.js";
import { findPrincipal, loadPrincipalDirectory } from "../src/auth/principal.js";
import { createRuntime } from "../src/bootstrap.js";
import { loadSettings } from "../src/env.js";
import { connectTools } from "../src/mcp/tool-host.js";
import { openDatabase } from "../src/persistence/database.js";
import type { Planner } from "../src/planners/planner.js";
import { loadConfig } from "../src/policy/config.js";
import { runConfigFor } from "../src/runtime/run-config.js";
import { runOptions } from "../src/runtime/routes.js";
import { createTestDatabase } from "../test/int/support/postgres.js";

const counts = { statements: 0, transactions: 0 };
const inBlock = new WeakSet<object>();
const originalQuery = pg.Client.prototype.query;
// Counting wrapper: every statement a pg client sends, and the transactions they make.
pg.Client.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
  const first = args[0];
  const text = (typeof first === "string" ? first : typeof first === "object" && first !== null ? String((first as { text?: unknown }).text ?? "") : "").trim().toLowerCase();
  counts.statements += 1;
  if (text.startsWith("begin")) inBlock.add(this);
  else if (text.startsWith("commit") || text.startsWith("rollback")) {
    inBlock.delete(this);
    counts.transactions += 1;
  } else if (!inBlock.has(this)) counts.transactions += 1;
  return (originalQuery as (...rest: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

/** N tool steps (a distinct 400-ish character search each), then a final answer. */
function stepsPlanner(steps: number): Planner {
  let turn = 0;
  return {
    kind: "scripted",
    async plan() {
      turn += 1;
      if (turn > steps) return { outcome: { type: "final", answer: "done", citations: [], abstained: true }, usage: { input_tokens: 10, output_tokens: 5 } };
      return {
        outcome: { type: "tool_calls", calls: [{ call_id: `call_${turn}_${randomUUID()}`, name: "search_notes", raw_arguments: JSON.stringify({ query: `attention variant ${turn}`, limit: 1 }) }] },
        usage: { input_tokens: 10, output_tokens: 5 },
      };
    },
  };
}

const CHECKPOINT_BYTES_SQL = `select coalesce(sum(bytes), 0)::bigint as bytes from (
  select octet_length(checkpoint::text) + octet_length(metadata::text) as bytes from checkpoints where thread_id = $1
  union all select coalesce(octet_length(blob), 0) from checkpoint_blobs where thread_id = $1
  union all select octet_length(blob) from checkpoint_writes where thread_id = $1
) parts`;

async function main(): Promise<void> {
  const scratch = await createTestDatabase();
  const settings = loadSettings({});
  const tools = await connectTools(await loadConfig(settings.configPath));
  const alice = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), "alice");
  try {
    const admin = new pg.Client({ connectionString: scratch.url });
    await admin.connect();
    const xactCommit = async () => Number((await admin.query("select xact_commit from pg_stat_database where datname = current_database()")).rows[0].xact_commit);

    /** One thread of `steps` tool steps on a freshly opened database: counts, ms and its checkpoint bytes. */
    const runThread = async (steps: number) => {
      const database = await openDatabase({ databaseUrl: scratch.url, dataDir: os.tmpdir() });
      const budgets = { ...settings.budgets, model_turns: steps + 2, tool_calls: steps + 2, no_progress_steps: 1000, max_repeats: 1000, deadline_ms: 600_000, tokens: 10_000_000, cost_usd: 1000 };
      const runtime = createRuntime({ ...settings, budgets }, { database, tools, planner: stepsPlanner(steps) });
      const graph = buildAgent(runtime.host).compile({ checkpointer: database.saver });
      const threadId = randomUUID();
      const config = { ...runConfigFor({ threadId, principal: alice, runBound: {} }), ...runOptions(budgets) };
      const before = { ...counts };
      const xactBefore = await xactCommit();
      const started = performance.now();
      await graph.invoke({ messages: [new HumanMessage("Compare self-attention with cross-attention using my notes")] }, config);
      const ms = performance.now() - started;
      const statements = counts.statements - before.statements;
      const transactions = counts.transactions - before.transactions;
      await database.close();
      const xact = (await xactCommit()) - xactBefore - 1; // minus the reading statement's own
      const bytes = await checkpointBytes(admin, threadId);
      return { ms, statements, transactions, xact, bytes };
    };

    await runThread(2); // warm-up: setup, first connections, JIT
    const short = await runThread(5);
    const long = await runThread(20);
    const perStep = (key: "ms" | "statements" | "transactions" | "xact") => ((long[key] - short[key]) / 15).toFixed(2);
    const at49 = await runThread(49);
    const at50 = await runThread(50);
    console.log(JSON.stringify({
      per_step_ms: perStep("ms"),
      pg_statements_per_step: perStep("statements"),
      pg_transactions_per_step_client: perStep("transactions"),
      pg_transactions_per_step_xact_commit: perStep("xact"),
      checkpoint_bytes_50_steps: at50.bytes,
      checkpoint_bytes_added_at_step_50: at50.bytes - at49.bytes,
      runs: { short, long },
    }, null, 2));
    await admin.end();
  } finally {
    await tools.close();
    await scratch.drop();
  }
}

async function checkpointBytes(admin: pg.Client, threadId: string): Promise<number> {
  return Number((await admin.query(CHECKPOINT_BYTES_SQL, [threadId])).rows[0].bytes);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
