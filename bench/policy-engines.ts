/**
 * `npm run bench -- --only policy`: what the `authorized` check costs a call
 * with each policy engine (issue 40): the built-in scopes and resource rules
 * against the shipped Cedar policies, on the same requests (the notes and
 * schedule tools as their servers list them; allowed and refused, for two
 * principals), interleaved rounds, medians. A tool step runs the check twice
 * (at the proposal and again at execute), so the step's added cost is twice
 * the difference; set against the last full bench's per-step time
 * (bench/results/latest.json) that gives the step ratio.
 */
import { readFile } from "node:fs/promises";
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
import { summarize } from "./stats.js";

const CALLS = 2_000;
const ROUNDS = 7;

export interface PolicyEngineCost {
  builtin_us_per_call: number;
  cedar_us_per_call: number;
  /** Twice the difference (two checks a step) over the last full bench's Warrant per-step time, when there is one. */
  step_ratio_estimate: number | null;
  per_step_ms_reference: number | null;
}

export async function measurePolicyEngines(settings: Settings): Promise<PolicyEngineCost> {
  const config = await loadConfig(settings.configPath);
  if (!config.policy.cedar) throw new Error("the config names no Cedar files (policy.cedar)");
  const compiled = compileConfiguredCedar(config.policy.cedar, settings.configPath);
  if (!compiled.engine) throw new Error(compiled.problems.map((problem) => problem.message).join("\n"));
  const cedar = compiled.engine;
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
    measure(builtinEngine);
    measure(cedar);
    const builtin: number[] = [];
    const viaCedar: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      // The engine that goes first alternates.
      if (round % 2 === 0) {
        builtin.push(measure(builtinEngine));
        viaCedar.push(measure(cedar));
      } else {
        viaCedar.push(measure(cedar));
        builtin.push(measure(builtinEngine));
      }
    }
    const builtinUs = summarize(builtin).median;
    const cedarUs = summarize(viaCedar).median;
    const reference = await referencePerStepMs();
    return {
      builtin_us_per_call: builtinUs,
      cedar_us_per_call: cedarUs,
      per_step_ms_reference: reference,
      step_ratio_estimate: reference === null ? null : (reference + (2 * (cedarUs - builtinUs)) / 1000) / reference,
    };
  } finally {
    await host.close();
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
    `authorized check, cedar:   ${cost.cedar_us_per_call.toFixed(1)} µs a call`,
  ];
  if (cost.step_ratio_estimate !== null && cost.per_step_ms_reference !== null)
    lines.push(
      `tool step (two checks) against ${cost.per_step_ms_reference.toFixed(2)} ms: ` +
        `${cost.step_ratio_estimate.toFixed(3)}× with cedar`,
    );
  return lines.join("\n");
}
