/**
 * The configured policy engine, and what is wrong with it: the Cedar files
 * compiled against each other (syntax, types against the schema) and the
 * schema against the catalog (an action for every contracted tool, in the
 * group of its risk). The server refuses to start on any of these problems;
 * `npm run policy -- check` prints them.
 */
import path from "node:path";
import { compileCedar, type CedarEngine, readCedarSources, watchedCedarEngine } from "./cedar.js";
import { APPROVE_ACTION, RISK_GROUP_PREFIX } from "./cedar-schema.js";
import type { PolicyEngineConfig } from "./config.js";
import type { CatalogTool } from "./contracts.js";
import { builtinEngine, type PolicyEngine } from "./engine.js";

export interface PolicyProblem {
  /** The config path the problem belongs to (`policy.cedar`). */
  path: string;
  message: string;
}

/** The engine a config chooses; Cedar files re-read when they change. `configFile` anchors relative paths. */
export function policyEngineFor(policy: PolicyEngineConfig, configFile: string): PolicyEngine {
  if (policy.engine !== "cedar" || !policy.cedar) return builtinEngine;
  return watchedCedarEngine(path.dirname(path.resolve(configFile)), policy.cedar);
}

/** Compiles the configured Cedar files once (for checks, explain and replay); problems instead of an engine. */
export function compileConfiguredCedar(
  files: NonNullable<PolicyEngineConfig["cedar"]>,
  configFile: string,
  options: { cacheDecisions?: boolean } = {},
): { engine?: CedarEngine; problems: PolicyProblem[] } {
  const { sources, problems } = readCedarSources(path.dirname(path.resolve(configFile)), files);
  const compiled = sources ? compileCedar(sources, options) : { problems };
  return {
    ...(compiled.engine ? { engine: compiled.engine } : {}),
    problems: compiled.problems.map((problem) => ({
      path: "policy.cedar",
      message: `${problem.file}${problem.policy ? ` (policy ${problem.policy})` : ""}: ${problem.message}`,
    })),
  };
}

/** Every problem of the configured engine: the files', then the schema's against the catalog when it is known. */
export function policyEngineProblems(
  policy: PolicyEngineConfig,
  configFile: string,
  catalog?: readonly CatalogTool[],
): PolicyProblem[] {
  if (!policy.cedar) return [];
  const { engine, problems } = compileConfiguredCedar(policy.cedar, configFile);
  if (!engine || !catalog) return problems;
  for (const tool of catalog) {
    if (tool.name === APPROVE_ACTION) {
      problems.push({
        path: "policy.cedar",
        message: `the tool name ${APPROVE_ACTION} is the Cedar action that decides reviews: rename the tool`,
      });
    } else if (!engine.actions.has(tool.name)) {
      problems.push({
        path: "policy.cedar",
        message: `the Cedar schema has no action for the contracted tool ${tool.name}`,
      });
    } else if (!engine.actionGroups(tool.name).includes(RISK_GROUP_PREFIX + tool.contract.risk)) {
      problems.push({
        path: "policy.cedar",
        message: `the Cedar action ${tool.name} is not in "${RISK_GROUP_PREFIX}${tool.contract.risk}" (its risk)`,
      });
    }
  }
  return problems;
}
