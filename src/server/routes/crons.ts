/**
 * Crons, as `@langchain/langgraph-sdk`'s `Client.crons` calls them:
 *
 *   POST   /runs/crons                    a stateless cron (a new thread per run)
 *   POST   /threads/{thread_id}/runs/crons a cron on one of the caller's threads
 *   POST   /runs/crons/search             the caller's crons
 *   POST   /runs/crons/count              how many
 *   PATCH  /runs/crons/{cron_id}          change schedule, zone, end, input, metadata, webhook, enabled
 *   DELETE /runs/crons/{cron_id}          → 204
 *
 * Another user's cron is as absent as one that never existed (404). Run
 * options a cron cannot honour are refused by name, like on run creation.
 */
import type { Hono } from "hono";
import { z } from "zod";
import { findUnsafeJson } from "../../policy/safe-text.js";
import type { CronRow, CronStore, NewCron } from "../../stores/cron-store.js";
import { checkSchedule, nextOccurrence } from "../crons/schedule.js";
import { notFound } from "../api-error.js";
import type { Env, RouteContext } from "../context.js";
import { clientMetadata } from "../request-fields.js";
import { ownerOf } from "../runs/types.js";
import { RunInput, requestText } from "../runs/requests.js";
import { ApiError } from "../../errors.js";

export interface CronRouteOptions {
  crons: CronStore;
  /** Crons one principal may have (`WARRANT_MAX_CRONS`). */
  maxPerPrincipal: number;
  /** Checks a webhook URL (422 `webhook_refused`); absent: webhooks are refused. */
  checkWebhook?: ((url: string) => Promise<void>) | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SafeId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_.:-]+$/);
const Metadata = z.record(z.string().min(1).max(128), z.unknown()).superRefine((value, context) => {
  const unsafe = findUnsafeJson(value, 16);
  if (unsafe) context.addIssue({ code: "custom", path: unsafe.path, message: unsafe.reason });
  else if (JSON.stringify(value).length > 16 * 1024)
    context.addIssue({ code: "custom", message: "is larger than 16 KiB" });
});
const EndTime = z.string().datetime({ offset: true }).max(64);
const Webhook = z.string().min(1).max(2048);

/** Options the SDK may send that a cron does not honour: refused by name when set. */
const REFUSED = {
  config: "config is not supported: a run's configuration is the server's",
  context: "context is not supported: a run's context is the server's",
  interrupt_before: "interrupt_before is not supported: reviews are decided by policy",
  interrupt_after: "interrupt_after is not supported: reviews are decided by policy",
  checkpoint_during: "checkpoint_during is not supported: a checkpoint is written after every step",
  durability: "durability is not supported: checkpoints are always written synchronously",
  stream_mode: "stream_mode is not supported: a cron's runs are not streamed (list or join them)",
  stream_subgraphs: "stream_subgraphs is not supported: a cron's runs are not streamed",
  stream_resumable: "stream_resumable is not supported: a cron's runs are not streamed",
  command: "command is not supported: a cron sends input",
  checkpoint_id: "checkpoint_id is not supported: a cron runs from the thread's head",
  after_seconds: "after_seconds is not supported on a cron: the schedule says when",
} as const;
const refusedKeys = Object.fromEntries(Object.keys(REFUSED).map((key) => [key, z.unknown().optional()]));

export const CronCreate = z
  .object({
    assistant_id: SafeId,
    schedule: z.unknown(),
    timezone: z.unknown().optional(),
    input: RunInput,
    metadata: Metadata.nullable().optional(),
    webhook: Webhook.nullable().optional(),
    multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).nullable().optional(),
    on_run_completed: z.enum(["delete", "keep"]).nullable().optional(),
    enabled: z.boolean().nullable().optional(),
    end_time: EndTime.nullable().optional(),
    ...refusedKeys,
  })
  .strict();

export const CronUpdate = z
  .object({
    schedule: z.unknown().optional(),
    timezone: z.unknown().optional(),
    input: RunInput.optional(),
    metadata: Metadata.nullable().optional(),
    webhook: Webhook.nullable().optional(),
    on_run_completed: z.enum(["delete", "keep"]).nullable().optional(),
    enabled: z.boolean().nullable().optional(),
    end_time: EndTime.nullable().optional(),
    ...refusedKeys,
  })
  .strict();

export const CronSearchBody = z
  .object({
    assistant_id: SafeId.nullable().optional(),
    thread_id: z.string().uuid().nullable().optional(),
    enabled: z.boolean().nullable().optional(),
    limit: z.number().int().min(1).max(1000).optional(),
    offset: z.number().int().min(0).max(1_000_000).optional(),
    sort_by: z
      .enum(["cron_id", "assistant_id", "thread_id", "next_run_date", "end_time", "created_at", "updated_at"])
      .nullable()
      .optional(),
    sort_order: z.enum(["asc", "desc"]).nullable().optional(),
    select: z.array(z.string().max(64)).max(32).nullable().optional(),
    metadata: Metadata.nullable().optional(),
  })
  .strict();

export const CronCountBody = CronSearchBody.pick({ assistant_id: true, thread_id: true, metadata: true });

function parsed<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const result = schema.safeParse(raw ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "body";
  const keys = issue?.code === "unrecognized_keys" ? ` ${issue.keys.join(", ")}` : "";
  throw new ApiError("invalid_request", `${where}${keys}: ${issue?.message ?? "invalid"}`);
}

function refuseUnhonoured(body: Record<string, unknown>): void {
  for (const [key, message] of Object.entries(REFUSED)) {
    const value = body[key];
    if (value !== undefined && value !== null) throw new ApiError("unsupported", message);
  }
  const strategy = body["multitask_strategy"];
  if (strategy !== undefined && strategy !== null && strategy !== "reject")
    throw new ApiError("unsupported", 'only multitask_strategy "reject" is supported on a cron');
}

function schedule(raw: unknown, zone: unknown): { schedule: string; timezone: string } {
  const checked = checkSchedule(raw, zone);
  if (!checked.ok) throw new ApiError("invalid_request", `${checked.path}: ${checked.reason}`);
  return { schedule: checked.schedule, timezone: checked.timezone };
}

function endTime(value: string | null | undefined): Date | null {
  if (value === undefined || value === null) return null;
  const date = new Date(value);
  if (date.getTime() <= Date.now()) throw new ApiError("invalid_request", "end_time: is in the past");
  return date;
}

export function cronJson(cron: CronRow): Record<string, unknown> {
  return {
    cron_id: cron.cron_id,
    assistant_id: cron.assistant_id,
    thread_id: cron.thread_id,
    on_run_completed: cron.thread_id === null ? cron.on_run_completed : undefined,
    end_time: cron.end_time?.toISOString() ?? null,
    schedule: cron.schedule,
    timezone: cron.timezone,
    created_at: cron.created_at.toISOString(),
    updated_at: cron.updated_at.toISOString(),
    payload: {
      assistant_id: cron.assistant_id,
      input: cron.payload.input,
      metadata: cron.payload.metadata,
      ...(cron.payload.webhook ? { webhook: cron.payload.webhook } : {}),
    },
    user_id: cron.owner,
    next_run_date: cron.enabled ? (cron.next_run_at?.toISOString() ?? null) : null,
    metadata: cron.metadata,
    enabled: cron.enabled,
    ...(cron.last_error ? { last_error: cron.last_error } : {}),
  };
}

export function registerCronRoutes(app: Hono<Env>, context: RouteContext, options: CronRouteOptions): void {
  const { crons } = options;
  const cronParam = (raw: string | undefined) => {
    if (!raw || !UUID.test(raw)) throw notFound("cron");
    return raw.toLowerCase();
  };
  const checkWebhook = async (url: string | null | undefined) => {
    if (url === undefined || url === null) return undefined;
    if (!options.checkWebhook) throw new ApiError("unsupported", "webhook: webhooks are not configured on this server");
    await options.checkWebhook(url);
    return url;
  };

  const create = async (raw: unknown, threadId: string | null, principal: Parameters<typeof ownerOf>[0]) => {
    const body = parsed(CronCreate, raw);
    refuseUnhonoured(body);
    context.manager.graph(body.assistant_id);
    requestText(body.input);
    if (threadId !== null && body.on_run_completed !== undefined && body.on_run_completed !== null)
      throw new ApiError("unsupported", "on_run_completed applies to stateless crons (POST /runs/crons) only");
    const when = schedule(body.schedule, body.timezone);
    const end = endTime(body.end_time);
    const webhook = await checkWebhook(body.webhook);
    // The one metadata rule (request-fields.ts): the server's keys are dropped here and again when it fires.
    const metadata = clientMetadata(body.metadata);
    const cron: NewCron = {
      principal,
      assistant_id: body.assistant_id,
      thread_id: threadId,
      ...when,
      payload: { input: body.input, metadata, ...(webhook ? { webhook } : {}) },
      metadata,
      end_time: end,
      on_run_completed: body.on_run_completed ?? "delete",
      enabled: body.enabled ?? true,
      next_run_at: nextOccurrence(when.schedule, when.timezone, new Date(), end) ?? null,
    };
    const created = await crons.create(cron, options.maxPerPrincipal);
    if (!created)
      throw new ApiError("too_many_crons", `at most ${options.maxPerPrincipal} crons per user; delete one first`);
    return cronJson(created);
  };

  app.post("/runs/crons", async (c) => c.json(await create(await context.body(c), null, context.principalOf(c))));
  app.post("/threads/:thread_id/runs/crons", async (c) => {
    const thread = await context.ownedThread(c);
    return c.json(await create(await context.body(c), thread.thread_id, context.principalOf(c)));
  });

  app.post("/runs/crons/search", async (c) => {
    const body = parsed(CronSearchBody, await context.body(c));
    const rows = await crons.search(ownerOf(context.principalOf(c)), {
      assistant_id: body.assistant_id ?? undefined,
      thread_id: body.thread_id?.toLowerCase() ?? undefined,
      enabled: body.enabled ?? undefined,
      metadata: body.metadata ?? undefined,
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      sort_by: body.sort_by ?? "created_at",
      sort_order: body.sort_order ?? "desc",
    });
    const select = body.select ?? undefined;
    return c.json(
      rows.map(cronJson).map((cron) => (select ? Object.fromEntries(select.map((key) => [key, cron[key]])) : cron)),
    );
  });

  app.post("/runs/crons/count", async (c) => {
    const body = parsed(CronCountBody, await context.body(c));
    return c.json(
      await crons.count(ownerOf(context.principalOf(c)), {
        assistant_id: body.assistant_id ?? undefined,
        thread_id: body.thread_id?.toLowerCase() ?? undefined,
        metadata: body.metadata ?? undefined,
      }),
    );
  });

  app.patch("/runs/crons/:cron_id", async (c) => {
    const owner = ownerOf(context.principalOf(c));
    const cronId = cronParam(c.req.param("cron_id"));
    const body = parsed(CronUpdate, await context.body(c));
    refuseUnhonoured(body);
    const existing = await crons.get(owner, cronId);
    if (!existing) throw notFound("cron");
    if (body.input) requestText(body.input);
    if (existing.thread_id !== null && body.on_run_completed !== undefined && body.on_run_completed !== null)
      throw new ApiError("unsupported", "on_run_completed applies to stateless crons only");
    const when =
      body.schedule !== undefined || body.timezone !== undefined
        ? schedule(body.schedule ?? existing.schedule, body.timezone ?? existing.timezone)
        : { schedule: existing.schedule, timezone: existing.timezone };
    const end = body.end_time === undefined ? existing.end_time : endTime(body.end_time);
    const webhook = body.webhook === undefined ? existing.payload.webhook : await checkWebhook(body.webhook);
    const metadata = body.metadata === undefined ? existing.metadata : clientMetadata(body.metadata);
    const updated = await crons.update(owner, cronId, {
      ...when,
      end_time: end,
      payload: {
        input: body.input ?? existing.payload.input,
        metadata,
        ...(webhook ? { webhook } : {}),
      },
      metadata,
      ...(body.on_run_completed ? { on_run_completed: body.on_run_completed } : {}),
      ...(body.enabled !== undefined && body.enabled !== null ? { enabled: body.enabled } : {}),
      next_run_at: nextOccurrence(when.schedule, when.timezone, new Date(), end) ?? null,
    });
    if (!updated) throw notFound("cron");
    return c.json(cronJson(updated));
  });

  app.delete("/runs/crons/:cron_id", async (c) => {
    const deleted = await crons.delete(ownerOf(context.principalOf(c)), cronParam(c.req.param("cron_id")));
    if (!deleted) throw notFound("cron");
    return c.body(null, 204);
  });
}
