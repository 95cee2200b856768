/**
 * The configurations measured, as data: which graph (the fixed workflow or
 * the agent) and which planner (rules, a real model from the environment,
 * or the real model-planner code path against a simulated
 * OpenAI-compatible endpoint with a named, seeded profile). A planner is
 * made per run (`openPlanner`), so a simulated endpoint's seed is per run.
 */
import { createModelPlanner } from "../src/planners/model.js";
import type { Planner } from "../src/planners/planner.js";
import { createRulesPlanner } from "../src/domains/rules-planner.js";
import { priceOf, type ModelPrice } from "../src/policy/pricing.js";

export type PlannerSpec =
  | { kind: "rules" }
  | { kind: "model"; model: string; endpoint: string | undefined }
  | { kind: "simulated"; profile: string };

export interface Configuration {
  id: string;
  graph: "workflow" | "agent";
  planner: PlannerSpec;
  /** Results of this configuration come from a simulated model, and the report says so. */
  simulated: boolean;
  description: string;
}

/** A simulated endpoint (h-sim's `eval/sim/endpoint.ts`). */
export interface SimulatedModel {
  baseUrl: string;
  model: string;
  /** What the simulated replies attempted so far, by kind (the simulator's own count). */
  attempts?(): Record<string, number>;
  close(): Promise<void>;
}

export interface SimulatorModule {
  startSimulatedModel(options: { profile: string; seed: number }): Promise<SimulatedModel>;
  SIMULATED_PROFILES: readonly { name: string; description: string }[];
}

/** Simulated replies are priced as this model (its price from the config), so cost per success can be compared; the report says so. */
export const SIMULATED_PRICE_MODEL = "gpt-4o-mini";

/** What is available to measure: a real model from the environment, and the simulator's profiles. */
export interface Available {
  realModel?: { model: string; endpoint: string | undefined };
  simulatedProfiles: readonly { name: string; description: string }[];
}

/** Every configuration to measure, in report order. */
export function configurationsFor(available: Available): Configuration[] {
  const configurations: Configuration[] = [
    {
      id: "workflow",
      graph: "workflow",
      planner: { kind: "rules" },
      simulated: false,
      description: "fixed workflow (graphs/workflow.ts), no model",
    },
    {
      id: "agent-rules",
      graph: "agent",
      planner: { kind: "rules" },
      simulated: false,
      description: "agent graph, rules planner",
    },
  ];
  const real = available.realModel;
  if (real) {
    const where = `${real.model} at ${real.endpoint ?? "the OpenAI default endpoint"}`;
    configurations.push(
      {
        id: "workflow-model",
        graph: "workflow",
        planner: { kind: "model", ...real },
        simulated: false,
        description: `fixed workflow, ${where}`,
      },
      {
        id: "agent-model",
        graph: "agent",
        planner: { kind: "model", ...real },
        simulated: false,
        description: `agent graph, model planner, ${where}`,
      },
    );
  }
  for (const profile of available.simulatedProfiles) {
    configurations.push({
      id: `agent-sim-${profile.name}`,
      graph: "agent",
      planner: { kind: "simulated", profile: profile.name },
      simulated: true,
      description:
        "SIMULATION: agent graph, model planner against the simulated endpoint, " +
        `profile "${profile.name}": ${profile.description}`,
    });
  }
  return configurations;
}

export interface OpenedPlanner {
  planner: Planner;
  /** The price every model call of this run is charged at (none: free). */
  price: ModelPrice | undefined;
  /** Violations the planner attempted by its own count (a simulated endpoint's); empty otherwise. */
  attempts(): Record<string, number>;
  close(): Promise<void>;
}

/** A small deterministic hash of a string (FNV-1a), for per-run seeds. */
export function seedOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1)
    hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193) >>> 0;
  return hash;
}

/** The planner for one run of a configuration. `seed` fixes a simulated profile's choices. */
export async function openPlanner(
  spec: PlannerSpec,
  prices: Record<string, ModelPrice>,
  seed: number,
  simulator: SimulatorModule | undefined,
  apiKey: string | undefined,
): Promise<OpenedPlanner> {
  const none = () => ({});
  if (spec.kind === "rules")
    return { planner: createRulesPlanner(), price: undefined, attempts: none, close: async () => undefined };
  if (spec.kind === "model") {
    const price = priceOf(prices, spec.model);
    const planner = createModelPlanner({
      model: spec.model,
      ...(spec.endpoint ? { baseUrl: spec.endpoint } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...(price ? { price } : {}),
    });
    return { planner, price, attempts: none, close: async () => undefined };
  }
  if (!simulator) throw new Error(`no simulator for profile ${spec.profile}`);
  const endpoint = await simulator.startSimulatedModel({ profile: spec.profile, seed });
  const price = priceOf(prices, SIMULATED_PRICE_MODEL);
  const planner = createModelPlanner({
    model: endpoint.model,
    baseUrl: endpoint.baseUrl,
    maxRetries: 0,
    timeoutMs: 15_000,
    ...(price ? { price } : {}),
  });
  const attempts = () =>
    Object.fromEntries(Object.entries(endpoint.attempts?.() ?? {}).filter(([, count]) => count > 0));
  return { planner, price, attempts, close: () => endpoint.close() };
}
