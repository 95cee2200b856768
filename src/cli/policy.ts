/**
 * `npm run policy -- <command>`: tools for the people who write the
 * contracts. Every command only reads: none changes a table or calls a tool.
 *
 *   check   [--config FILE]                 every problem of a config, with its path (exit 1 on any error),
 *                                           Cedar policies type-checked against their schema included
 *   schema  [--config FILE]                 the Cedar schema for the contracted tools the servers list
 *   matrix  [--config FILE] [--principals FILE] [--json]
 *                                           per principal and stage: offered, withheld (why), who reviews
 *   explain RUN_ID [CALL_ID] [--json]       each proposal of a recorded run: checks passed, refusal, review, execution
 *   replay  RUN_ID… | --last N  [--config FILE] [--policies FILE,…] [--engine builtin|cedar]
 *           [--principals FILE] [--json]
 *                                           re-decides recorded proposals under another config, other Cedar
 *                                           policies or the other engine (what-if)
 *
 * check and matrix start the configured MCP servers to list their tools (a
 * listing, never a call); explain and replay read the database named by
 * DATABASE_URL (else the embedded one). Exit 2 on a usage error.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { loadPrincipalDirectory, type Principal } from "../auth/principal.js";
import { configProblemsFor } from "../bootstrap.js";
import { loadSettings, type Settings } from "../env.js";
import { ConfigError } from "../errors.js";
import { buildCatalog, type ListedTool } from "../mcp/catalog.js";
import { connectTools } from "../mcp/tool-host.js";
import { formatProblem, parseConfigProblems, type ConfigProblem } from "../policy/config-check.js";
import { cedarSchemaFor } from "../policy/cedar-schema.js";
import type { WarrantConfig } from "../policy/config.js";
import { builtinEngine, type PolicyEngine } from "../policy/engine.js";
import { compileConfiguredCedar } from "../policy/policy-engine.js";
import { mappedGroupPrincipals, policyMatrix, renderMatrix, stagesOf } from "../policy/matrix.js";
import { STAGE } from "../graph/step.js";
import { explainRun, renderExplanation } from "../trace/explain.js";
import { readReplayRecords, type ReplayRecords } from "../trace/read-replay.js";
import { findServer, operatorToken, requestJson } from "./server-client.js";
import { renderReplay, replay } from "../trace/replay.js";
import { commandLine, RUN_ID, usageError, type CommandLine } from "./command-line.js";
import { exitOnConfigError } from "./config-errors.js";
import { traceOf, withHistory } from "./history-reader.js";
import { POLICY_USAGE as USAGE } from "./usage.js";

const CALL_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const MAX_LAST = 1_000;

/** A config file's problems, the config when it parsed, and its name for messages. */
async function readConfig(file: string): Promise<{ config?: WarrantConfig; problems: ConfigProblem[] }> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new ConfigError("config_invalid", `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`);
  }
  if (Buffer.byteLength(text) > 1024 * 1024) throw new ConfigError("config_invalid", `${file}: larger than 1 MiB`);
  return parseConfigProblems(text);
}

async function principalsFrom(file: string): Promise<Principal[]> {
  return [...(await loadPrincipalDirectory(file)).values()];
}

/** Starts the config's servers, lists their tools, and closes them again. */
async function withTools<T>(
  config: WarrantConfig,
  settings: Settings,
  body: (tools: Awaited<ReturnType<typeof connectTools>>) => Promise<T>,
) {
  const tools = await connectTools(config, undefined, {
    hostValues: { DATABASE_URL: settings.databaseUrl },
    onHealth: () => {},
  });
  try {
    return await body(tools);
  } finally {
    await tools.close();
  }
}

async function check(parsed: CommandLine, settings: Settings): Promise<number> {
  const file = stringFlag(parsed, "config") ?? settings.configPath;
  const { config, problems } = await readConfig(file);
  const found = [...problems];
  // The same checks as the server's start, with the principals and model the deployment's settings name.
  if (config)
    found.push(
      ...(await withTools(config, settings, (tools) =>
        configProblemsFor(config, settings, tools, { allPolicyFiles: true }),
      )),
    );
  for (const problem of found) process.stdout.write(`${formatProblem(problem, file)}\n`);
  const errors = found.filter((problem) => problem.severity === "error").length;
  process.stdout.write(`${file}: ${errors} error(s), ${found.length - errors} warning(s)\n`);
  return errors > 0 ? 1 : 0;
}

/** The Cedar schema for the tools the config's servers list (stdout): what `policy.cedar.schema` should hold. */
async function schema(parsed: CommandLine, settings: Settings): Promise<number> {
  const file = stringFlag(parsed, "config") ?? settings.configPath;
  const { config, problems } = await readConfig(file);
  if (!config) {
    for (const problem of problems) process.stderr.write(`${formatProblem(problem, file)}\n`);
    return 1;
  }
  process.stdout.write(await withTools(config, settings, async (tools) => cedarSchemaFor(tools.catalog())));
  return 0;
}

async function matrix(parsed: CommandLine, settings: Settings): Promise<number> {
  const file = stringFlag(parsed, "config") ?? settings.configPath;
  const { config, problems } = await readConfig(file);
  if (!config) {
    for (const problem of problems) process.stderr.write(`${formatProblem(problem, file)}\n`);
    return 1;
  }
  // The directory's principals, then a stand-in for each group an identity provider's mapping names.
  const principals = [
    ...(await principalsFrom(stringFlag(parsed, "principals") ?? settings.principalsPath)),
    ...mappedGroupPrincipals(config.auth.oidc),
  ];
  // With the Cedar engine, what its policies refuse a principal outright is withheld too.
  const engine =
    config.policy.engine === "cedar" && config.policy.cedar
      ? compileConfiguredCedar(config.policy.cedar, file).engine
      : undefined;
  const rows = await withTools(config, settings, async (tools) => {
    const catalog = tools.catalog();
    return policyMatrix({
      tools: catalog,
      principals,
      reviewPolicy: config.review_policy,
      stages: stagesOf(catalog, STAGE),
      ...(engine ? { engine } : {}),
    });
  });
  process.stdout.write(
    parsed.values["json"] === true ? `${JSON.stringify(rows, null, 2)}\n` : `${renderMatrix(rows)}\n`,
  );
  return 0;
}

async function explain(parsed: CommandLine, settings: Settings): Promise<number> {
  const [runId, callId, ...extra] = parsed.positionals;
  if (runId === undefined || !RUN_ID.test(runId) || (callId !== undefined && !CALL_ID.test(callId)) || extra.length)
    return usageError("explain takes RUN_ID [CALL_ID] (letters, digits, `_.:-`, at most 128)", USAGE);
  const trace = await traceOf(settings, runId);
  if (!trace) {
    process.stderr.write(`warrant: not_found: no run ${runId} in this database\n`);
    return 1;
  }
  const calls = explainRun(trace, callId);
  if (callId !== undefined && calls.length === 0) {
    process.stderr.write(`warrant: not_found: run ${runId} has no call ${callId}\n`);
    return 1;
  }
  const json = parsed.values["json"] === true;
  const policies = await configuredPolicies(settings.configPath);
  process.stdout.write(
    json
      ? `${JSON.stringify(calls, null, 2)}\n`
      : `${renderExplanation(trace, calls, (id) => policies?.get(id)?.text)}\n`,
  );
  return 0;
}

/** The configured Cedar policies by id, to quote the ones that decided (none when the config names no Cedar files). */
async function configuredPolicies(file: string): Promise<ReadonlyMap<string, { text: string }> | undefined> {
  const { config } = await readConfig(file);
  if (!config?.policy.cedar) return undefined;
  return compileConfiguredCedar(config.policy.cedar, file).engine?.policies;
}

/**
 * The engine replay decides with: `--policies FILE[,FILE…]` (Cedar, with the config's schema), `--engine`, else the
 * config's own. Problems are printed and `undefined` returned.
 */
function replayEngine(parsed: CommandLine, config: WarrantConfig, file: string): PolicyEngine | undefined {
  const policies = stringFlag(parsed, "policies");
  const engine = stringFlag(parsed, "engine") ?? (policies !== undefined ? "cedar" : config.policy.engine);
  if (engine === "builtin") return builtinEngine;
  const schema = config.policy.cedar?.schema;
  if (engine !== "cedar" || schema === undefined) {
    process.stderr.write(`warrant: config_invalid: ${file}: --engine cedar needs policy.cedar.schema in the config\n`);
    return undefined;
  }
  const files = policies?.split(",").map((entry) => path.resolve(entry)) ?? config.policy.cedar?.policies ?? [];
  const compiled = compileConfiguredCedar({ schema, policies: files }, file);
  for (const problem of compiled.problems) process.stderr.write(`error ${file}: ${problem.path} ${problem.message}\n`);
  return compiled.engine;
}

/** What replay re-decides: from the running server when there is one, else read here. */
async function recordsOf(
  settings: Settings,
  which: { runIds: readonly string[] } | { last: number },
): Promise<ReplayRecords> {
  const server = await findServer(settings);
  if (server) {
    const body = "last" in which ? { last: which.last } : { run_ids: which.runIds };
    return (
      await requestJson<ReplayRecords>(server, await operatorToken(settings), "POST", "/operator/replay-records", {
        body,
      })
    ).body;
  }
  return withHistory(settings, (database, graphFor) => readReplayRecords(database, graphFor, which));
}

async function replayRuns(parsed: CommandLine, settings: Settings): Promise<number> {
  const policyFlags = stringFlag(parsed, "policies") !== undefined || stringFlag(parsed, "engine") !== undefined;
  const file = stringFlag(parsed, "config") ?? (policyFlags ? settings.configPath : undefined);
  if (file === undefined)
    return usageError("replay needs --config FILE, --policies FILE or --engine (the policy to replay under)", USAGE);
  const engineName = stringFlag(parsed, "engine");
  if (engineName !== undefined && engineName !== "builtin" && engineName !== "cedar")
    return usageError("--engine takes builtin or cedar", USAGE);
  const lastText = stringFlag(parsed, "last");
  const last = lastText === undefined ? undefined : Number(lastText);
  const runIds = parsed.positionals;
  if (last !== undefined && (!Number.isInteger(last) || last < 1 || last > MAX_LAST))
    return usageError(`--last takes a whole number from 1 to ${MAX_LAST}`, USAGE);
  if ((last === undefined) === (runIds.length === 0) || runIds.some((id) => !RUN_ID.test(id)) || runIds.length > 100)
    return usageError("replay takes up to 100 RUN_IDs or --last N, not both", USAGE);
  const { config, problems } = await readConfig(file);
  if (!config) {
    for (const problem of problems) process.stderr.write(`${formatProblem(problem, file)}\n`);
    return 1;
  }
  const engine = replayEngine(parsed, config, file);
  if (!engine) return 1;
  const principalsFile = stringFlag(parsed, "principals");
  const directory = principalsFile ? new Map((await principalsFrom(principalsFile)).map((p) => [p.user_id, p])) : null;
  const { steps, unknown, definitions } = await recordsOf(settings, last !== undefined ? { last } : { runIds });
  if (unknown.length > 0) {
    process.stderr.write(`warrant: not_found: no run ${unknown.join(", ")} in this database\n`);
    return 1;
  }
  // The tools as they were defined when they ran: the pinned definitions.
  const listed: Record<string, ListedTool[]> = {};
  for (const definition of definitions) {
    const tools = listed[definition.server] ?? [];
    tools.push(definition.tool);
    listed[definition.server] = tools;
  }
  const { tools: catalog } = buildCatalog(config.tools, listed);
  const listedNames = new Set(definitions.map((definition) => definition.tool.name));
  const report = replay(steps, {
    catalog,
    isListed: (name) => listedNames.has(name),
    contracts: Object.values(config.tools),
    reviewPolicy: config.review_policy,
    maxTools: config.selection.max_tools,
    budgets: settings.budgets,
    stage: STAGE,
    // With another directory, the owner as recorded but with the permissions it lists (unlisted: no permissions).
    principal: (recorded) =>
      directory === null ? recorded : (directory.get(recorded.user_id) ?? { ...recorded, scopes: [], grants: {} }),
    engine,
  });
  const json = parsed.values["json"] === true;
  process.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : `${renderReplay(report, file)}\n`);
  return 0;
}

function stringFlag(parsed: CommandLine, name: string): string | undefined {
  const value = parsed.values[name];
  return typeof value === "string" ? value : undefined;
}

async function main(argv: string[]): Promise<number> {
  const parsed = commandLine(
    argv,
    {
      config: { type: "string" },
      principals: { type: "string" },
      json: { type: "boolean" },
      last: { type: "string" },
      policies: { type: "string" },
      engine: { type: "string" },
    },
    USAGE,
  );
  if (typeof parsed === "number") return parsed;
  const [command, ...rest] = parsed.positionals;
  const commands = { check, schema, matrix, explain, replay: replayRuns } as const;
  if (command === undefined || !Object.hasOwn(commands, command))
    return usageError("expected check, schema, matrix, explain or replay", USAGE);
  const run = commands[command as keyof typeof commands];
  return exitOnConfigError(async () => run({ ...parsed, positionals: rest }, loadSettings()));
}

process.exitCode = await main(process.argv.slice(2));
