/**
 * The thread, history and assistant request bodies the API accepts, as zod
 * schemas (run bodies: runs/requests.ts). Field names follow
 * `@langchain/langgraph-sdk`; everything is type-checked and size-bounded.
 */
import { z } from "zod";
import { findUnsafeJson } from "../policy/safe-text.js";
import {
  CheckpointId,
  MAX_METADATA_BYTES,
  MAX_METADATA_DEPTH,
  MAX_RESUME_DEPTH,
  Metadata,
  parseBody,
  safeJson,
  safeKey,
} from "./request-fields.js";
import { ApiError } from "../errors.js";

const Uuid = z.string().uuid();
const Limit = z.number().int().min(1).max(1000);
const Offset = z.number().int().min(0).max(1_000_000);
const ThreadStatusSchema = z.enum(["idle", "busy", "interrupted", "error"]);

export const ThreadCreate = z.object({
  thread_id: Uuid.optional(),
  metadata: Metadata.optional(),
  if_exists: z.enum(["raise", "do_nothing"]).optional(),
  graph_id: safeKey(0, 128).nullable().optional(),
  // Refused when set (threads routes): accepted only to say so by name.
  ttl: z.unknown().optional(),
  supersteps: z.unknown().optional(),
});

/**
 * The state values a thread search or count can filter on: the thread's
 * last run status and how it ended, kept beside the thread row when a run
 * ends (so the filter runs in SQL). Any other key is refused by name.
 */
export const FILTERABLE_VALUES = ["status", "termination_reason", "result"] as const;
const ValuesFilter = z
  .record(z.string().max(64), z.unknown())
  .superRefine(safeJson(MAX_METADATA_DEPTH, MAX_METADATA_BYTES))
  .nullable();

/** Thread fields `select` may name (the SDK's Thread). */
export const THREAD_FIELDS = [
  "thread_id",
  "created_at",
  "updated_at",
  "metadata",
  "status",
  "values",
  "interrupts",
] as const;
export const THREAD_SORT_KEYS = ["thread_id", "status", "created_at", "updated_at"] as const;

export const ThreadSearch = z.object({
  metadata: Metadata.nullable().optional(),
  status: ThreadStatusSchema.nullable().optional(),
  limit: Limit.optional(),
  offset: Offset.optional(),
  ids: z.array(Uuid).max(1000).nullable().optional(),
  values: ValuesFilter.optional(),
  sort_by: z.enum(THREAD_SORT_KEYS).nullable().optional(),
  sort_order: z.enum(["asc", "desc"]).nullable().optional(),
  select: z.array(z.enum(THREAD_FIELDS)).max(THREAD_FIELDS.length).nullable().optional(),
  extract: z.unknown().optional(),
});

/** The `values` filter, checked: only keys kept beside the thread row. */
export function valuesFilter(values: Record<string, unknown> | null | undefined): Record<string, unknown> | undefined {
  if (!values || Object.keys(values).length === 0) return undefined;
  for (const key of Object.keys(values)) {
    if (!(FILTERABLE_VALUES as readonly string[]).includes(key)) {
      throw new ApiError(
        "unsupported",
        `values: threads can be filtered on ${FILTERABLE_VALUES.join(", ")} only, not ${JSON.stringify(key.slice(0, 64))}`,
      );
    }
  }
  return values;
}

export const RunListQuery = z.object({
  limit: Limit.optional(),
  offset: Offset.optional(),
  status: z.enum(["pending", "running", "success", "error", "interrupted", "timeout"]).optional(),
});

export const ThreadCount = z.object({
  metadata: Metadata.nullable().optional(),
  status: ThreadStatusSchema.nullable().optional(),
  values: ValuesFilter.optional(),
});

export const ThreadPatch = z.object({ metadata: Metadata });

export const HistoryQuery = z.object({
  limit: Limit.optional(),
  before: z.union([CheckpointId, z.object({ checkpoint_id: CheckpointId }).passthrough()]).optional(),
  checkpoint: z.object({ checkpoint_id: CheckpointId.optional() }).passthrough().optional(),
  metadata: Metadata.optional(),
});

const CheckpointRef = z
  .object({
    checkpoint_id: CheckpointId.nullable().optional(),
    checkpoint_ns: safeKey(0, 256).optional(),
    thread_id: safeKey(0, 128).nullable().optional(),
    checkpoint_map: z.record(z.string().max(256), z.unknown()).nullable().optional(),
  })
  .strict();

/**
 * `POST /threads/{id}/state/checkpoint`: the SDK's `{checkpoint: {…}}`
 * (`threads.getState(thread, checkpoint)`), or a bare `checkpoint_id`.
 * `subgraphs` changes nothing (the graphs have none).
 */
export const StateAtCheckpoint = z
  .object({
    checkpoint: CheckpointRef.nullable().optional(),
    checkpoint_id: CheckpointId.nullable().optional(),
    subgraphs: z.boolean().nullable().optional(),
  })
  .strict();

export const ASSISTANT_FIELDS = [
  "assistant_id",
  "graph_id",
  "name",
  "description",
  "config",
  "context",
  "metadata",
  "version",
  "created_at",
  "updated_at",
] as const;

export const AssistantSearch = z.object({
  graph_id: z.string().max(128).nullable().optional(),
  name: z.string().max(128).nullable().optional(),
  metadata: Metadata.nullable().optional(),
  limit: Limit.optional(),
  offset: Offset.optional(),
  sort_by: z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"]).nullable().optional(),
  sort_order: z.enum(["asc", "desc"]).nullable().optional(),
  select: z.array(z.enum(ASSISTANT_FIELDS)).max(ASSISTANT_FIELDS.length).nullable().optional(),
});

export const AssistantVersions = z.object({
  metadata: Metadata.nullable().optional(),
  limit: Limit.optional(),
  offset: Offset.optional(),
});

/**
 * A resume value sent outside a run body (the reviewer inbox): checked as
 * `command.resume` is, since it is checkpointed as sent. Throws
 * `invalid_request` naming the path inside it.
 */
export function assertSafeResume(value: unknown): void {
  const unsafe = findUnsafeJson(value, MAX_RESUME_DEPTH);
  if (unsafe)
    throw new ApiError(
      "invalid_request",
      `${unsafe.path.length > 0 ? unsafe.path.join(".") : "body"}: ${unsafe.reason}`,
    );
}

/** A checkpoint id from a path: a safe identifier, or `invalid_request` naming `checkpoint_id`. */
export function checkpointIdParam(value: string): string {
  return parseBody(z.object({ checkpoint_id: CheckpointId }), { checkpoint_id: value }).checkpoint_id;
}

/**
 * JSON.parse that refuses prototype-polluting keys anywhere in the body.
 * Throws `invalid_json` for anything that is not JSON.
 */
export function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text, (key, value: unknown) => {
      if (key === "__proto__" || key === "constructor" || key === "prototype")
        throw new ApiError("invalid_request", `the key ${JSON.stringify(key)} is not allowed`);
      return value;
    });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError("invalid_json", "the body is not valid JSON");
  }
}
