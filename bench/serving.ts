/**
 * `npm run bench:serving`: what serving costs. The same request (alice's notes
 * question: a search and three reads through real MCP servers, on Postgres)
 * is run three ways, interleaved, in one process and one database:
 *
 *   baseline   the compiled graph invoked in-process (no HTTP)
 *   wait       POST /threads/{id}/runs/wait through our server and the SDK
 *   stream     POST /threads/{id}/runs/stream (updates + values) through the SDK
 *
 * Prints medians and p90s in ms and the ratios against the baseline measured
 * in the same run. Absolute numbers depend on the machine; the ratios are
 * the result. `BENCH_RUNS` sets the number of measured runs per way (default 15).
 * Uses DATABASE_URL when set (it writes threads there: point it at a scratch
 * database), else an embedded Postgres in a temporary directory.
 */
import { randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Client } from "@langchain/langgraph-sdk";
import { mintApiToken } from "../src/auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory } from "../src/auth/principal.js";
import { loadSettings } from "../src/env.js";
import { runOptions } from "../src/graph/routes.js";
import { startServer } from "../src/server/server.js";
import { runConfigFor } from "../src/run-config.js";

const QUESTION = "Compare self-attention with cross-attention using my notes";
const WARMUP = 3;
const RUNS = Number(process.env["BENCH_RUNS"] ?? 15);

function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function main(): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-bench-"));
  const secretHex = randomBytes(32).toString("hex");
  const settings = loadSettings({
    ...process.env,
    WARRANT_DATA_DIR: dataDir,
    WARRANT_AUTH_SECRET: secretHex,
    PORT: "0",
    HOST: "127.0.0.1",
    WARRANT_PLANNER: "rules",
  });
  const server = await startServer({ settings, log: () => undefined });
  try {
    const alice = findPrincipal(await loadPrincipalDirectory(settings.principalsPath), "alice");
    const token = await mintApiToken(Uint8Array.from(Buffer.from(secretHex, "hex")), alice);
    const client = new Client({ apiUrl: server.url, defaultHeaders: { Authorization: `Bearer ${token}` } });
    const graph = server.manager.graph("agent");
    const input = { messages: [{ role: "user" as const, content: QUESTION }] };

    const ways: Record<string, () => Promise<void>> = {
      baseline: async () => {
        const config = {
          ...runConfigFor({ threadId: randomUUID(), principal: alice }),
          ...runOptions(settings.budgets),
        };
        const values = (await graph.invoke({ messages: [new HumanMessage(QUESTION)] }, config)) as { status?: string };
        if (values.status !== "completed") throw new Error(`baseline run ended ${values.status}`);
      },
      wait: async () => {
        const thread = await client.threads.create();
        const values = (await client.runs.wait(thread.thread_id, "agent", { input })) as { status?: string };
        if (values.status !== "completed") throw new Error(`wait run ended ${values.status}`);
      },
      stream: async () => {
        const thread = await client.threads.create();
        let last: { status?: string } | undefined;
        for await (const part of client.runs.stream(thread.thread_id, "agent", {
          input,
          streamMode: ["updates", "values"],
        })) {
          if (part.event === "values") last = part.data as { status?: string };
        }
        if (last?.status !== "completed") throw new Error(`stream run ended ${last?.status}`);
      },
    };
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));
    for (let round = 0; round < WARMUP + RUNS; round += 1) {
      // Interleaved, so drift (caches, JIT, the other core) hits every way alike.
      for (const [name, run] of Object.entries(ways)) {
        const started = performance.now();
        await run();
        if (round >= WARMUP) samples[name]!.push(performance.now() - started);
      }
    }
    const base = quantile(samples["baseline"]!, 0.5);
    const database = settings.databaseUrl ? "Postgres server" : "embedded Postgres";
    console.log(`warrant bench: serving overhead, ${RUNS} runs per way after ${WARMUP} warm-up rounds (${database})`);
    console.log("way        median ms   p90 ms   median ratio vs baseline");
    for (const [name, values] of Object.entries(samples)) {
      const median = quantile(values, 0.5);
      const p90 = quantile(values, 0.9);
      console.log(
        `${name.padEnd(10)} ${median.toFixed(1).padStart(9)} ${p90.toFixed(1).padStart(8)}   ${(median / base).toFixed(2)}x`,
      );
    }
  } finally {
    await server.close({ drainMs: 5_000 });
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
