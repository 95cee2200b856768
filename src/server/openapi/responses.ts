/**
 * What the API answers with, as zod schemas for the OpenAPI document: the
 * typed error body every refusal uses, and the main objects (threads, runs,
 * assistants, crons, store items, reviews). Objects list the fields clients
 * rely on and allow more (the SDK's types grow; a `select` can drop fields).
 */
import { z } from "zod";
import { API_ERROR_CODES } from "../../errors.js";

/** Codes answered outside `ApiError`: the operator routes' lost race and the dev sign-in's unknown user. */
const OTHER_ERROR_CODES = ["conflict", "principal_unknown"] as const;

export const ErrorBody = z.looseObject({
  error: z.enum([...API_ERROR_CODES, ...OTHER_ERROR_CODES]).describe("the typed error code"),
  message: z.string().describe("what went wrong, for a person; never echoes the request"),
});

const Timestamp = z.string().describe("ISO 8601 date-time");
const JsonObject = z.record(z.string(), z.unknown());

export const ThreadSchema = z
  .object({
    thread_id: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
    metadata: JsonObject,
    status: z.enum(["idle", "busy", "interrupted", "error"]),
    values: z.unknown(),
    interrupts: z.unknown(),
  })
  .partial({ values: true, interrupts: true });

/** A search's rows: `select` may name any subset of the fields. */
export const ThreadRows = z.array(ThreadSchema.partial());

export const RunSchema = z.looseObject({
  run_id: z.string(),
  thread_id: z.string().nullable(),
  assistant_id: z.string(),
  created_at: Timestamp,
  updated_at: Timestamp,
  status: z.enum(["pending", "running", "success", "error", "interrupted", "timeout"]),
  metadata: JsonObject,
  kwargs: z.unknown(),
  multitask_strategy: z.string(),
  error: z.unknown().optional(),
  outcome: z.unknown().optional(),
});

export const AssistantSchema = z
  .object({
    assistant_id: z.string(),
    graph_id: z.string(),
    name: z.string(),
    version: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .partial();

export const ThreadStateSchema = z
  .object({ values: z.unknown(), next: z.array(z.string()), checkpoint: z.unknown(), tasks: z.array(z.unknown()) })
  .partial();

export const CronSchema = z
  .object({
    cron_id: z.string(),
    assistant_id: z.string(),
    thread_id: z.string().nullable(),
    schedule: z.string(),
    timezone: z.string().nullable().optional(),
    end_time: Timestamp.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    payload: JsonObject,
  })
  .partial();

export const StoreItemSchema = z.looseObject({
  namespace: z.array(z.string()),
  key: z.string(),
  value: JsonObject,
  created_at: Timestamp,
  updated_at: Timestamp,
  score: z.number().nullable().optional(),
});

export const ReviewSchema = z.looseObject({ thread_id: z.string(), owner: z.string(), review: z.unknown() }).partial();

export const ElicitationSchema = z
  .object({
    elicitation_id: z.string(),
    server: z.string(),
    message: z.string(),
    expires_at: Timestamp,
    /** `url`: the owner consents to open `url` (whose host is `host`); there is no form. */
    mode: z.enum(["form", "url"]),
    url: z.string(),
    host: z.string(),
  })
  .partial();

export const Health = z.looseObject({
  ok: z.boolean(),
  accepting_runs: z.boolean().optional(),
  error: z.string().optional(),
});
export const Info = z.looseObject({ version: z.string(), name: z.string(), flags: z.record(z.string(), z.boolean()) });
export const Count = z.number().int().min(0);
/** A value this document does not describe further (JSON of the route's own shape). */
export const AnyJson = z.unknown();
