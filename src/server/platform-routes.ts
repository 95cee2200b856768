/**
 * The LangGraph platform routes beyond threads and runs: the store, crons,
 * and the webhook check that run creation uses (set on the route context).
 */
import type { Hono } from "hono";
import type { ItemTable } from "../stores/store-item-table.js";
import type { Webhooks } from "./webhooks/webhooks.js";
import type { Env, RouteContext } from "./context.js";
import { registerCronRoutes, type CronRouteOptions } from "./routes/crons.js";
import { registerStoreRoutes } from "./routes/store.js";

export interface PlatformOptions {
  items: ItemTable;
  crons: Omit<CronRouteOptions, "checkWebhook">;
  webhooks?: Webhooks | undefined;
}

export function registerPlatformRoutes(app: Hono<Env>, context: RouteContext, options: PlatformOptions): void {
  registerStoreRoutes(app, context, options.items);
  registerCronRoutes(app, context, {
    ...options.crons,
    ...(options.webhooks ? { checkWebhook: (url: string) => (options.webhooks as Webhooks).check(url) } : {}),
  });
}
