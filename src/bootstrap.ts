/**
 * Composition root: builds the host's resources from settings. Every
 * resource is opened lazily on first use (never at import) and closed by
 * `close()`.
 */
import { loadApiSecret } from "./auth/api-token.js";
import { principalDirectory, type PrincipalDirectory } from "./auth/principal-directory.js";
import { contextProviders } from "./domains/index.js";
import type { Settings } from "./env.js";
import { lazy, type Host } from "./host.js";
import { connectTools, type ToolHost } from "./mcp/tool-host.js";
import { openDatabase, type Database } from "./persistence/database.js";
import { createModelPlanner } from "./planners/model.js";
import type { Planner } from "./planners/planner.js";
import { createRulesPlanner } from "./domains/rules-planner.js";
import { DEFAULT_CONTEXT_WINDOW_TOKENS, loadConfig, type ModelSettings } from "./policy/config.js";
import { priceOf, type ModelPrice } from "./policy/pricing.js";
import { redactionKeyFrom } from "./policy/secrets.js";

export interface Runtime {
  host: Host;
  database(): Promise<Database>;
  close(): Promise<void>;
}

/** The configured planner; `prices` are the config's `models` (an unlisted model costs 0). */
export function plannerFor(
  settings: Settings,
  prices: Record<string, Partial<ModelSettings> & ModelPrice> = {},
): Planner {
  if (settings.planner === "rules") return createRulesPlanner();
  const model = priceOf(prices, settings.model.name);
  // An unlisted model: no price, no allowed_tools, the default compaction budget.
  const planner = model
    ? {
        price: {
          input_per_million_usd: model.input_per_million_usd,
          output_per_million_usd: model.output_per_million_usd,
        },
        allowedTools: model.allowed_tools ?? false,
        contextBudgetTokens:
          model.compact_at_tokens ?? Math.floor((model.context_window_tokens ?? DEFAULT_CONTEXT_WINDOW_TOKENS) / 2),
      }
    : {};
  return createModelPlanner({
    model: settings.model.name,
    ...planner,
    ...(settings.model.baseUrl ? { baseUrl: settings.model.baseUrl } : {}),
    ...(settings.model.apiKey ? { apiKey: settings.model.apiKey } : {}),
  });
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
    const { pins, audit } = await database();
    const redactionKey = redactionKeyFrom(
      await loadApiSecret({ configured: settings.server.authSecret, dataDir: settings.dataDir }),
    );
    return connectTools(await config(), undefined, {
      hostValues: { DATABASE_URL: settings.databaseUrl },
      pins,
      audit,
      redactionKey,
    });
  };
  const tools = overrides.tools ? async () => overrides.tools as ToolHost : lazy(connect);
  const config = lazy(() => loadConfig(settings.configPath));
  const principals = overrides.principals ?? principalDirectory(settings.principalsPath);
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
    reviewPolicy: async () => (await config()).review_policy,
    currentPrincipal: (principal) => principals.current(principal),
    contextProviders,
    now: overrides.now ?? Date.now,
  };
  return {
    host,
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
