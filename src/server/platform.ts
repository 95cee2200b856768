/**
 * Builds the store, crons and webhooks for one server instance: their
 * Postgres tables' handles, the run manager's hooks (each run's
 * `config.store`, the webhook end hook) and, once the run manager exists,
 * the cron scheduler loop. `server.ts` calls these three steps in order.
 */
import type { PrincipalDirectory } from "../auth/principal-directory.js";
import { createCronStore } from "../stores/cron-store.js";
import { startScheduler, type Scheduler } from "./crons/scheduler.js";
import type { Settings } from "../env.js";
import type { Database } from "../stores/open-database.js";
import type { Owner } from "../stores/thread-rows.js";
import { loadConfig } from "../policy/config.js";
import { createItemTable } from "../stores/store-item-table.js";
import { PrincipalStore } from "../stores/principal-item-store.js";
import { createWebhookStore } from "../stores/webhook-store.js";
import { startWebhooks, type Webhooks } from "./webhooks/webhooks.js";
import type { PlatformOptions } from "./platform-routes.js";
import { threadConfig } from "../run-config.js";
import type { ServedGraph } from "./runs/types.js";
import type { RunManager } from "./runs/manager.js";

const DEFAULTS = { cronIntervalMs: 5_000, maxCrons: 10, webhookSecret: undefined, webhookPollMs: 1_000 };

export interface Platform {
  routes: PlatformOptions;
  /** Each run's `config.store`: its owner's view. */
  storeFor(owner: Owner): PrincipalStore;
  webhooks: Webhooks;
  /** Starts the cron scheduler on this instance (after the run manager exists). */
  startScheduler(options: { manager: RunManager; directory: PrincipalDirectory; graph: () => ServedGraph }): Scheduler;
  /** Stops sending webhooks (after the runs have drained, so their ends are recorded). */
  close(): Promise<void>;
}

export async function preparePlatform(options: {
  settings: Settings;
  database: Database;
  log: (line: string) => void;
}): Promise<Platform> {
  const { database, log } = options;
  const settings = { ...DEFAULTS, ...options.settings.platform };
  const config = await loadConfig(options.settings.configPath);
  const items = createItemTable(database.pool, database.schema);
  const crons = createCronStore(database.pool, database.schema);
  // The scheduler's ticks and the webhook sender's loop run on the background connections (Database.background).
  const cronTicks = createCronStore(database.background, database.schema);
  const webhooks = startWebhooks({
    store: createWebhookStore(database.pool, database.schema),
    sender: createWebhookStore(database.background, database.schema),
    threads: database.threads,
    config: config.webhooks,
    secret: settings.webhookSecret,
    pollMs: settings.webhookPollMs,
    log,
  });
  return {
    routes: { items, crons: { crons, maxPerPrincipal: settings.maxCrons }, webhooks },
    storeFor: (owner) => new PrincipalStore(items, owner),
    webhooks,
    startScheduler: ({ manager, directory, graph }) =>
      startScheduler({
        crons: cronTicks,
        intervalMs: settings.cronIntervalMs,
        claimDelayMs: options.settings.platform?.testCronClaimDelayMs,
        log,
        firing: {
          manager,
          threads: database.threads,
          ledger: database.ledger,
          directory,
          snapshotOf: (threadId) => graph().getState(threadConfig(threadId)),
          deleteCheckpoints: (threadId) => database.saver.deleteThread(threadId),
          registerWebhook: (owner, threadId, runId, url) => webhooks.register(owner, threadId, runId, url),
          log,
        },
      }),
    close: () => webhooks.stop(),
  };
}
