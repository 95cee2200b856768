/**
 * Composition root: builds the host's resources from settings. Every
 * resource is opened lazily on first use (never at import) and closed by
 * `close()`.
 */
import { loadApiSecret } from "./auth/api-token.js";
import { configuredDirectory, verifiedOnly, type PrincipalDirectory } from "./auth/principal-directory.js";
import { contextProviders } from "./domains/index.js";
import { credentialValues, type Settings } from "./env.js";
import { createOAuthTokenStore } from "./stores/oauth-token-store.js";
import { stateKeyFrom } from "./oauth/state.js";
import { credentialNames } from "./oauth/config.js";
import { lazy, type Host } from "./host.js";
import { connectTools, type ToolHost } from "./mcp/tool-host.js";
import { openDatabase, type Database } from "./stores/open-database.js";
import { createElicitationStore } from "./stores/elicitation-store.js";
import { createElicitationBroker } from "./elicitation/broker.js";
import { createModelPlanner } from "./planners/model.js";
import { parseModelName } from "./model-name.js";
import type { Planner } from "./planners/planner.js";
import { createRulesPlanner } from "./domains/rules-planner.js";
import { DEFAULT_CONTEXT_WINDOW_TOKENS, loadConfig, type ModelSettings, type WarrantConfig } from "./policy/config.js";
import { configProblems, formatProblem, type ConfigProblem } from "./policy/config-check.js";
import { loadPrincipalDirectory } from "./auth/principal.js";
import { listingFacts } from "./mcp/listing-facts.js";
import { ConfigError } from "./errors.js";
import { policyEngineFor, policyEngineProblems } from "./policy/policy-engine.js";
import { priceOf, type ModelPrice } from "./policy/pricing.js";
import { redactionKeyFrom } from "./secrets/scanner.js";

export interface Runtime {
  host: Host;
  /** The principal directory runs and requests are checked against (authoritative unless verified claims only). */
  principals: PrincipalDirectory;
  database(): Promise<Database>;
  close(): Promise<void>;
}

/** The configured planner; `prices` are the config's `models` (an unlisted model costs 0). */
export function plannerFor(
  settings: Settings,
  prices: Record<string, Partial<ModelSettings> & ModelPrice> = {},
): Planner {
  if (settings.planner === "rules") return createRulesPlanner();
  const named = parseModelName(settings.model.name);
  // Listed by the full name (`anthropic:claude-…`) or by the provider's own model name.
  const model = priceOf(prices, settings.model.name) ?? priceOf(prices, named.model);
  // An unlisted model: no price, the provider's caching and no allowed_tools, the default compaction budget.
  const planner = model
    ? {
        price: {
          input_per_million_usd: model.input_per_million_usd,
          output_per_million_usd: model.output_per_million_usd,
          ...(model.cached_input_per_million_usd !== undefined
            ? { cached_input_per_million_usd: model.cached_input_per_million_usd }
            : {}),
          ...(model.cache_write_per_million_usd !== undefined
            ? { cache_write_per_million_usd: model.cache_write_per_million_usd }
            : {}),
        },
        allowedTools: named.provider !== "anthropic" && allowedToolsOf(model),
        ...(model.caching !== undefined ? { caching: model.caching } : {}),
        contextBudgetTokens:
          model.compact_at_tokens ?? Math.floor((model.context_window_tokens ?? DEFAULT_CONTEXT_WINDOW_TOKENS) / 2),
      }
    : {};
  const anthropic = named.provider === "anthropic";
  const google = named.provider === "google-genai";
  const baseUrl = anthropic
    ? settings.model.anthropicBaseUrl
    : google
      ? settings.model.googleBaseUrl
      : settings.model.baseUrl;
  const apiKey = anthropic
    ? settings.model.anthropicApiKey
    : google
      ? settings.model.googleApiKey
      : settings.model.apiKey;
  return createModelPlanner({
    model: named.model,
    provider: named.provider,
    ...planner,
    ...(baseUrl ? { baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
  });
}

/** `tool_restriction`, or its older spelling `allowed_tools`; a note by default. */
function allowedToolsOf(model: Partial<ModelSettings>): boolean {
  if (model.tool_restriction !== undefined) return model.tool_restriction === "allowed_tools";
  return model.allowed_tools ?? false;
}

/** Everything the nodes need, from settings; `overrides` replace parts (tests, CLI). */
export function createRuntime(
  settings: Settings,
  overrides: {
    database?: Database;
    tools?: ToolHost;
    planner?: Planner;
    now?: () => number;
    principals?: PrincipalDirectory;
    /** A poller of task waits runs beside the graphs (the server): task writes pause the thread (Host.taskWaits). */
    detachTasks?: boolean;
  } = {},
): Runtime {
  const database = overrides.database
    ? async () => overrides.database as Database
    : lazy(() =>
        openDatabase({
          ...(settings.databaseUrl ? { databaseUrl: settings.databaseUrl } : {}),
          dataDir: settings.dataDir,
          pool: settings.pool,
        }),
      );
  // The calendar (and any server whose config asks for it) shares the host's database; tool definitions are pinned in it,
  // redactions of secrets in results are audited in it, with markers keyed per deployment.
  const connect = async () => {
    opened.database = true;
    const { pins, audit, pool, schema } = await database();
    const deploymentSecret = await loadApiSecret({ configured: settings.server.authSecret, dataDir: settings.dataDir });
    const redactionKey = redactionKeyFrom(deploymentSecret);
    const configured = await config();
    return connectTools(configured, undefined, {
      hostValues: { DATABASE_URL: settings.databaseUrl, WARRANT_DATA_DIR: settings.dataDir },
      pins,
      audit,
      redactionKey,
      // A server's questions during a call go to the run's owner (src/elicitation/broker.ts).
      elicitation: createElicitationBroker({
        store: createElicitationStore(pool, schema),
        timeoutMs: configured.elicitation.timeout_ms,
        audit,
      }),
      // OAuth tokens of third-party servers: per owner and server, sealed with a key derived from the deployment secret.
      oauth: {
        store: createOAuthTokenStore(pool, schema, deploymentSecret),
        stateKey: stateKeyFrom(deploymentSecret),
        credentials: credentialValues(credentialNames(configured.servers)),
      },
    });
  };
  const tools = overrides.tools ? async () => overrides.tools as ToolHost : lazy(connect);
  const config = lazy(() => loadConfig(settings.configPath));
  // Cedar policy files are re-read when they change, at the next check (execute's re-check included).
  const policyEngine = lazy(async () => policyEngineFor((await config()).policy, settings.configPath));
  const principals =
    overrides.principals ??
    (settings.verifiedClaimsOnly
      ? verifiedOnly
      : configuredDirectory(settings.principalsPath, async () => (await config()).auth.oidc));
  const planner = overrides.planner
    ? async () => overrides.planner as Planner
    : lazy(async () => plannerFor(settings, settings.planner === "model" ? (await config()).models : {}));
  let opened = { database: false, tools: false };
  const host: Host = {
    budgets: settings.budgets,
    tools: async () => {
      opened.tools = true;
      return tools();
    },
    planner,
    ledger: async () => {
      opened.database = true;
      return (await database()).ledger;
    },
    approvals: async () => {
      opened.database = true;
      return (await database()).approvals;
    },
    audit: async () => {
      opened.database = true;
      return (await database()).audit;
    },
    saveHolding: async () => {
      opened.database = true;
      return (await database()).saver;
    },
    ...(overrides.detachTasks
      ? {
          taskWaits: async () => {
            opened.database = true;
            return (await database()).taskWaits;
          },
        }
      : {}),
    reviewPolicy: async () => (await config()).review_policy,
    policyEngine,
    currentPrincipal: (principal) => principals.current(principal),
    contextProviders,
    now: overrides.now ?? Date.now,
  };
  return {
    host,
    principals,
    database: async () => {
      opened.database = true;
      return database();
    },
    async close() {
      const closing: Promise<unknown>[] = [];
      // Only what we opened ourselves; overrides belong to the caller.
      if (opened.tools && !overrides.tools) closing.push(tools().then((host) => host.close()));
      if (opened.database && !overrides.database) closing.push(database().then((db) => db.close()));
      opened = { database: false, tools: false };
      await Promise.allSettled(closing);
    },
  };
}

/** The host `graphs/agent.ts` uses when served without our entry points. */
export function defaultHost(settings: Settings): Host {
  return createRuntime(settings).host;
}

/**
 * What `npm run policy -- check` reports beyond the schema, for a parsed
 * config: contracts against the tools the connected servers list (when a
 * host is given), review rules against the principal directory, the
 * configured model's price.
 */
export async function configProblemsFor(
  config: WarrantConfig,
  settings: Settings,
  tools?: Pick<ToolHost, "catalog" | "isHealthy">,
  options: { allPolicyFiles?: boolean } = {},
): Promise<ConfigProblem[]> {
  const problems = configProblems(config, {
    ...(tools ? { listed: listingFacts(config, tools) } : {}),
    principals: [...(await loadPrincipalDirectory(settings.principalsPath)).values()],
    model: { planner: settings.planner, name: settings.model.name },
  });
  // The policy engine's files: Cedar's diagnostics, and the schema against the contracted tools the servers list.
  // The server reads them only when Cedar decides (a config copied without its policy files still starts on the
  // built-in engine); `policy check` reads whatever files the config names.
  const checkFiles = config.policy.engine === "cedar" || options.allPolicyFiles === true;
  const engine = checkFiles ? policyEngineProblems(config.policy, settings.configPath, tools?.catalog()) : [];
  return [...problems, ...engine.map((problem) => ({ ...problem, severity: "error" as const }))];
}

/** Refuses to start on any error the config check finds, with the lines it prints; returns its warning lines. */
export async function refuseConfigErrors(
  settings: Settings,
  tools?: Pick<ToolHost, "catalog" | "isHealthy">,
): Promise<string[]> {
  const config = await loadConfig(settings.configPath);
  const problems = await configProblemsFor(config, settings, tools);
  const errors = problems.filter((problem) => problem.severity === "error");
  if (errors.length === 0) return problems.map((problem) => formatProblem(problem, settings.configPath));
  const lines = errors.map((problem) => formatProblem(problem, settings.configPath));
  throw new ConfigError("config_invalid", `${errors.length} error(s) in the config:\n${lines.join("\n")}`);
}
