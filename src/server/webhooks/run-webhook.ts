/**
 * A run request's `webhook`, checked before anything is written: a URL the
 * server may call (webhooks.ts `check`), or a typed 422. The one call the
 * run-creation route makes (`runs/routes.ts`), besides registering the URL
 * under the run's id just before the run starts.
 */
import type { RouteContext } from "../context.js";
import { ApiError } from "../../errors.js";

export async function admitWebhook(
  context: Pick<RouteContext, "webhooks">,
  value: unknown,
): Promise<string | undefined> {
  if (value === undefined || value === null) return undefined;
  if (!context.webhooks) throw new ApiError("unsupported", "webhook: webhooks are not configured on this server");
  if (typeof value !== "string" || value.length === 0 || value.length > 2048)
    throw new ApiError("invalid_request", "webhook: must be a URL of at most 2048 characters");
  await context.webhooks.check(value);
  return value;
}
