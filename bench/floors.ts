/**
 * The floors under a tool step: one raw MCP call (the SDK client straight to
 * the notes server over stdio, no agent) and one bare commit (an autocommit
 * INSERT on the bench's pool). No variant can take less per step than these.
 */
import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type pg from "pg";
import { REPO_ROOT, type Settings } from "../src/env.js";
import { loadConfig } from "../src/policy/config.js";
import { TOOL_NAME, USER_ID, stepArguments } from "./script.js";

const WARMUP = 5;

async function timed(times: number, work: (index: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < WARMUP + times; index += 1) {
    const started = performance.now();
    await work(index);
    if (index >= WARMUP) samples.push(performance.now() - started);
  }
  return samples;
}

/** Milliseconds per raw `search_notes` call, and the length of one result's text (what each step adds to a thread). */
export async function rawMcpCall(
  settings: Settings,
  times: number,
): Promise<{ samples: number[]; resultChars: number }> {
  const notes = (await loadConfig(settings.configPath)).servers["notes"];
  if (notes?.transport !== "stdio") throw new Error("the shipped notes server is not stdio");
  const client = new Client({ name: "warrant-bench", version: "0.1.0" });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: notes.args, cwd: REPO_ROOT, stderr: "ignore" }),
  );
  try {
    let resultChars = 0;
    const samples = await timed(times, async (index) => {
      const result = await client.callTool({
        name: TOOL_NAME,
        arguments: { ...stepArguments(index + 1), user_id: USER_ID },
      });
      const content = result.content as { type: string; text?: string }[];
      resultChars = content.reduce((total, part) => total + (part.text?.length ?? 0), 0);
    });
    return { samples, resultChars };
  } finally {
    await client.close();
  }
}

/** Milliseconds per autocommit INSERT into a scratch table of the bench's database. */
export async function bareCommit(pool: pg.Pool, times: number): Promise<number[]> {
  await pool.query(
    "create table if not exists bench_floor (id uuid primary key, at timestamptz not null default now())",
  );
  return timed(times, () => pool.query("insert into bench_floor (id) values ($1)", [randomUUID()]));
}
