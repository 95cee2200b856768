/**
 * `npm run bench -- --only policy`: what the `authorized` check costs a call
 * with each policy engine (issue 40): the built-in scopes and resource rules
 * against the shipped Cedar policies, on the same requests (the notes and
 * schedule tools as their servers list them; allowed and refused, for two
 * principals), interleaved rounds, medians. A tool step runs the check twice
 * (at the proposal and again at execute), so the step's added cost is twice
 * the difference; set against the last full bench's per-step time
 * (bench/results/latest.json) that gives the step ratio. Cedar is timed with
 * its decision cache (what the server runs) and without (every check asks
 * Cedar).
 *
 * Then the tool step itself with each engine, in the same run: Warrant's real
 * graph (bench/variants.ts, the notes config) once on the built-in engine and
 * once on the shipped Cedar policies, per-step slopes between a 2- and a
 * 10-step thread, rounds interleaved (the engine that goes first alternates),
 * medians of BENCH_POLICY_RUNS (default 30) after 3 unmeasured rounds.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadPrincipalDirectory } from "../src/auth/principal.js";
import type { Settings } from "../src/env.js";
import { connectTools } from "../src/mcp/tool-host.js";
import { authorized, type Candidate, type DecideContext } from "../src/policy/checks.js";
import { loadConfig } from "../src/policy/config.js";
import type { CatalogTool } from "../src/policy/contracts.js";
import { builtinEngine, type PolicyEngine } from "../src/policy/engine.js";
import { compileConfiguredCedar } from "../src/policy/policy-engine.js";
import type { Database } from "../src/stores/open-database.js";
import type { ScriptedEndpoint } from "./scripted-endpoint.js";
import { perStepSlopes, summarize } from "./stats.js";
import { warrantVariant, type Variant } from "./variants.js";

const CALLS = 2_000;
const ROUNDS = 7;

export interface PolicyEngineCost {
  builtin_us_per_call: number;
  cedar_us_per_call: number;
  /** Cedar without its decision cache: every check one Cedar request. */
  cedar_uncached_us_per_call: number;
  /** The tool step's time (ms, median per-step slope) with each engine, when measured. */
  per_step_ms: { builtin: number; cedar: number; rounds: number } | null;
  /** Twice the difference (two checks a step) over the last full bench's Warrant per-step time, when there is one. */
  step_ratio_estimate: number | null;
  per_step_ms_reference: number | null;
}

export async function measurePolicyEngines(
  settings: Settings,
  steps?: { database: Database; endpoint: ScriptedEndpoint },
): Promise<PolicyEngineCost> {
  const config = await loadConfig(settings.configPath);
  if (!config.policy.cedar) throw new Error("the config names no Cedar files (policy.cedar)");
  const compiled = compileConfiguredCedar(config.policy.cedar, settings.configPath);
  if (!compiled.engine) throw new Error(compiled.problems.map((problem) => problem.message).join("\n"));
  const cedar = compiled.engine;
  const uncached = compileConfiguredCedar(config.policy.cedar, settings.configPath, { cacheDecisions: false }).engine;
  if (!uncached) throw new Error("the Cedar files do not compile");
  const servers = Object.fromEntries(
    Object.entries(config.servers).filter(([name]) => name === "notes" || name === "schedule"),
  );
  const tools = Object.fromEntries(
    Object.entries(config.tools).filter(([, contract]) => Object.hasOwn(servers, contract.server)),
  );
  const host = await connectTools({ ...config, servers, tools }, undefined, {
    hostValues: { DATABASE_URL: settings.databaseUrl },
    onHealth: () => {},
  });
  try {
    const catalog = host.catalog();
    const directory = await loadPrincipalDirectory(settings.principalsPath);
    const owners = ["alice", "bob"].map((id) => directory.get(id)).filter((p) => p !== undefined);
    const tool = (name: string) => catalog.find((entry) => entry.name === name) as CatalogTool;
    const requests: { candidate: Candidate; owner: (typeof owners)[number] }[] = [];
    for (const owner of owners)
      for (const [name, args] of [
        ["read_note", { note_id: "cs301.bm25" }],
        ["read_note", { note_id: "db201.acid" }],
        ["search_notes", { query: "attention", course: "cs301" }],
        ["calculate_schedule", { total_minutes: 240, days: 4, daily_limit: 90 }],
      ] as const)
        requests.push({
          owner,
          candidate: {
            proposal: { call_id: "c", name, raw_arguments: "" },
            tool: tool(name),
            modelArgs: { ...args },
            fingerprint: `fp-${name}`,
          },
        });
    const contextFor = (engine: PolicyEngine, owner: (typeof owners)[number]): DecideContext => ({
      offer: { offered: [], withheld: [] },
      catalog: { find: () => undefined, isListed: () => false },
      owner,
      threadId: "bench",
      runBound: {},
      reviewPolicy: config.review_policy,
      maxRepeats: 3,
      now: Date.now(),
      engine,
    });
    const counters = { budgetLeft: 10, repeats: {} };
    const measure = (engine: PolicyEngine): number => {
      const contexts = requests.map((request) => contextFor(engine, request.owner));
      const started = performance.now();
      for (let index = 0; index < CALLS; index += 1) {
        const which = index % requests.length;
        authorized.run(
          (requests[which] as (typeof requests)[number]).candidate,
          contexts[which] as DecideContext,
          counters,
        );
      }
      return ((performance.now() - started) * 1000) / CALLS;
    };
    const engines = [builtinEngine, cedar, uncached];
    for (const engine of engines) measure(engine);
    const samples: number[][] = engines.map(() => []);
    for (let round = 0; round < ROUNDS; round += 1) {
      // The engine that goes first rotates.
      for (let index = 0; index < engines.length; index += 1) {
        const which = (index + round) % engines.length;
        samples[which]?.push(measure(engines[which] as PolicyEngine));
      }
    }
    const [builtinUs, cedarUs, uncachedUs] = samples.map((values) => summarize(values).median) as [
      number,
      number,
      number,
    ];
    const reference = await referencePerStepMs();
    return {
      builtin_us_per_call: builtinUs,
      cedar_us_per_call: cedarUs,
      cedar_uncached_us_per_call: uncachedUs,
      per_step_ms: steps ? await measureSteps(settings, steps.database, steps.endpoint) : null,
      per_step_ms_reference: reference,
      step_ratio_estimate: reference === null ? null : (reference + (2 * (cedarUs - builtinUs)) / 1000) / reference,
    };
  } finally {
    await host.close();
  }
}

const STEP_RUNS = Number(process.env["BENCH_POLICY_RUNS"] ?? 30);
const STEP_WARMUP = 3;

/** Warrant's tool step on each engine: the same graph, the Cedar one on a config naming the shipped policies. */
async function measureSteps(
  settings: Settings,
  database: Database,
  endpoint: ScriptedEndpoint,
): Promise<{ builtin: number; cedar: number; rounds: number }> {
  const shipped = JSON.parse(await readFile(settings.configPath, "utf8")) as {
    policy: { cedar: { schema: string; policies: string[] } };
  };
  const base = path.dirname(path.resolve(settings.configPath));
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-policy-"));
  const cedarConfig = path.join(dir, "warrant.config.json");
  const files = shipped.policy.cedar;
  await writeFile(
    cedarConfig,
    JSON.stringify({
      ...shipped,
      policy: {
        engine: "cedar",
        cedar: {
          schema: path.resolve(base, files.schema),
          policies: files.policies.map((file) => path.resolve(base, file)),
        },
      },
    }),
  );
  const variants: [Variant, Variant] = [
    await warrantVariant({ ...settings, configPath: settings.configPath }, database, endpoint),
    await warrantVariant({ ...settings, configPath: cedarConfig }, database, endpoint),
  ];
  try {
    const short: number[][] = [[], []];
    const long: number[][] = [[], []];
    const timed = async (variant: Variant, count: number) => {
      const started = performance.now();
      await variant.run(count, randomUUID());
      return performance.now() - started;
    };
    for (let round = 0; round < STEP_WARMUP + STEP_RUNS; round += 1) {
      for (const offset of [0, 1]) {
        const which = (round + offset) % 2;
        const variant = variants[which] as Variant;
        const shortMs = await timed(variant, 2);
        const longMs = await timed(variant, 10);
        if (round < STEP_WARMUP) continue;
        short[which]?.push(shortMs);
        long[which]?.push(longMs);
      }
    }
    const slope = (which: number) => summarize(perStepSlopes(short[which] ?? [], long[which] ?? [], 2, 10)).median;
    return { builtin: slope(0), cedar: slope(1), rounds: STEP_RUNS };
  } finally {
    for (const variant of variants) await variant.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function referencePerStepMs(): Promise<number | null> {
  try {
    const latest = JSON.parse(await readFile(path.join(import.meta.dirname, "results", "latest.json"), "utf8")) as {
      per_step_ms?: { warrant?: number };
    };
    return latest.per_step_ms?.warrant ?? null;
  } catch {
    return null;
  }
}

export function renderPolicyEngineCost(cost: PolicyEngineCost): string {
  const load = os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(" ");
  const lines = [
    `load average ${load} on ${os.cpus().length} cpus`,
    `authorized check, builtin: ${cost.builtin_us_per_call.toFixed(1)} µs a call`,
    `authorized check, cedar:   ${cost.cedar_us_per_call.toFixed(1)} µs a call (decision cache)`,
    `authorized check, cedar:   ${cost.cedar_uncached_us_per_call.toFixed(1)} µs a call (no cache: one Cedar request each)`,
  ];
  if (cost.per_step_ms)
    lines.push(
      `tool step, builtin: ${cost.per_step_ms.builtin.toFixed(2)} ms; cedar: ${cost.per_step_ms.cedar.toFixed(2)} ms; ` +
        `${(cost.per_step_ms.cedar / cost.per_step_ms.builtin).toFixed(3)}× (${cost.per_step_ms.rounds} rounds)`,
    );
  if (cost.step_ratio_estimate !== null && cost.per_step_ms_reference !== null)
    lines.push(
      `tool step (two checks) against ${cost.per_step_ms_reference.toFixed(2)} ms: ` +
        `${cost.step_ratio_estimate.toFixed(3)}× with cedar`,
    );
  return lines.join("\n");
}
