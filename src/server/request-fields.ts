/**
 * The building blocks of every request schema: safe identifiers and text,
 * bounded JSON, metadata, and the one parser that turns a zod failure into
 * `invalid_request` naming the field.
 */
import { z } from "zod";
import { MAX_ARGUMENT_DEPTH } from "../policy/arguments.js";
import { findUnsafeJson, unsafeKeyReason, unsafeTextReason } from "../policy/safe-text.js";
import { ApiError } from "../errors.js";

/** Largest metadata object (as JSON). */
export const MAX_METADATA_BYTES = 16 * 1024;

/**
 * Metadata keys only the server writes (identity, and the ids it puts on
 * runs and checkpoints): a client's values for them are dropped, wherever a
 * run can come from (thread and stateless runs, `config.metadata`, crons when
 * created and again when they fire, queued runs, resumes). Matched without
 * regard to case.
 */
const RESERVED_METADATA = new Set([
  "owner",
  "tenant",
  "user_id",
  "graph_id",
  "assistant_id",
  "thread_id",
  "run_id",
  "cron_id",
]);
/** Prefixes of keys only the server writes: LangGraph's auth keys and Warrant's own. */
const RESERVED_METADATA_PREFIXES = ["langgraph_auth", "warrant_"];

/** Whether a metadata key is the server's (see {@link clientMetadata}). */
export function isReservedMetadataKey(key: string): boolean {
  const lower = key.toLowerCase();
  return RESERVED_METADATA.has(lower) || RESERVED_METADATA_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

/** Deepest metadata accepted (the metadata object is level 1): it is stored as jsonb and searched with `@>`. */
export const MAX_METADATA_DEPTH = 16;
/**
 * Deepest resume value accepted: decisions → decision → edited_action → args
 * is four levels above the arguments, which the parser bounds at
 * MAX_ARGUMENT_DEPTH. The raw value is checkpointed before any node reads
 * it, and LangGraph cannot read back a checkpoint nested deeper than 50.
 */
export const MAX_RESUME_DEPTH = MAX_ARGUMENT_DEPTH + 4;

/** An identifier a client sends (key, id, name), `min` to `max` characters: storable, and no control, bidi or zero-width character. */
export const safeKey = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .superRefine((value, context) => {
      const reason = unsafeKeyReason(value);
      if (reason) context.addIssue({ code: "custom", message: reason });
    });

/** Free text a client sends, at most `max` characters: storable (no NUL or other C0 control but tab and newlines, no lone surrogate). */
export const safeText = (max: number) =>
  z
    .string()
    .max(max)
    .superRefine((value, context) => {
      const reason = unsafeTextReason(value);
      if (reason) context.addIssue({ code: "custom", message: reason });
    });

/**
 * A JSON value from a client that is stored (jsonb, a checkpoint): every
 * key a safe identifier, every string storable, bounded depth. Checked
 * without recursion before anything recursive (JSON.stringify) sees it;
 * the issue names the path, e.g. `metadata.foo`.
 */
export function safeJson(maxDepth: number, maxBytes?: number) {
  return (value: unknown, context: z.RefinementCtx) => {
    const unsafe = findUnsafeJson(value, maxDepth);
    if (unsafe) {
      context.addIssue({ code: "custom", message: unsafe.reason, path: unsafe.path });
      return;
    }
    if (maxBytes !== undefined && JSON.stringify(value).length > maxBytes)
      context.addIssue({ code: "custom", message: `is larger than ${maxBytes} bytes` });
  };
}

export const Metadata = z
  .record(z.string().min(1).max(128), z.unknown())
  .superRefine(safeJson(MAX_METADATA_DEPTH, MAX_METADATA_BYTES));
export const CheckpointId = safeKey(1, 128);

/**
 * The one rule for client metadata: the keys the server owns are dropped
 * (never refused, so a client that echoes a run's or thread's metadata back,
 * as LangGraph's clients do, keeps working), the rest is kept as sent.
 */
export function clientMetadata(metadata: Record<string, unknown> | null | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(metadata ?? {}).filter(([key]) => !isReservedMetadataKey(key)));
}

/**
 * Parses a body (or the part of one at `at`) against a schema; failures are
 * `invalid_request` naming the first bad field (never echoing its value).
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown, at?: string): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = [...(at ? [at] : []), ...(issue?.path ?? [])];
    const where = path.length ? path.join(".") : "body";
    throw new ApiError("invalid_request", `${where}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}
