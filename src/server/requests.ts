/**
 * The request bodies the API accepts, as zod schemas. Field names follow
 * `@langchain/langgraph-sdk`. Fields that could carry identity or write
 * state are either absent (so ignored: `config`, `context`) or refused with
 * a typed error; everything else is type-checked and size-bounded.
 */
import { HumanMessage } from "@langchain/core/messages";
import { z } from "zod";
import { MAX_ARGUMENT_DEPTH } from "../policy/arguments.js";
import { findUnsafeJson, unsafeKeyReason, unsafeTextReason } from "../policy/safe-text.js";
import { ApiError } from "./api-error.js";
import { STREAM_MODES, type ClientStreamMode } from "./runs.js";

/** Longest request text a user may send. */
export const MAX_REQUEST_CHARS = 8_000;
/** Largest metadata object (as JSON). */
const MAX_METADATA_BYTES = 16 * 1024;

/** Metadata keys only the server writes: a client's values for them are dropped. */
const RESERVED_METADATA = new Set(["owner", "tenant", "user_id", "graph_id", "assistant_id", "thread_id", "run_id", "langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions"]);

/** Deepest metadata accepted (the metadata object is level 1): it is stored as jsonb and searched with `@>`. */
const MAX_METADATA_DEPTH = 16;
/**
 * Deepest resume value accepted: decisions → decision → edited_action → args
 * is four levels above the arguments, which the parser bounds at
 * MAX_ARGUMENT_DEPTH. The raw value is checkpointed before any node reads
 * it, and LangGraph cannot read back a checkpoint nested deeper than 50.
 */
const MAX_RESUME_DEPTH = MAX_ARGUMENT_DEPTH + 4;

/** An identifier a client sends (key, id, name), `min` to `max` characters: storable, and no control, bidi or zero-width character. */
const safeKey = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .superRefine((value, context) => {
      const reason = unsafeKeyReason(value);
      if (reason) context.addIssue({ code: "custom", message: reason });
    });

/** Free text a client sends, at most `max` characters: storable (no NUL or other C0 control but tab and newlines, no lone surrogate). */
const safeText = (max: number) =>
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
function safeJson(maxDepth: number, maxBytes?: number) {
  return (value: unknown, context: z.RefinementCtx) => {
    const unsafe = findUnsafeJson(value, maxDepth);
    if (unsafe) {
      context.addIssue({ code: "custom", message: unsafe.reason, path: unsafe.path });
      return;
    }
    if (maxBytes !== undefined && JSON.stringify(value).length > maxBytes) context.addIssue({ code: "custom", message: `is larger than ${maxBytes} bytes` });
  };
}

const Metadata = z.record(z.string().min(1).max(128), z.unknown()).superRefine(safeJson(MAX_METADATA_DEPTH, MAX_METADATA_BYTES));
const CheckpointId = safeKey(1, 128);

/** Drops the keys the server owns. */
export function clientMetadata(metadata: Record<string, unknown> | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(metadata ?? {}).filter(([key]) => !RESERVED_METADATA.has(key)));
}

const Uuid = z.string().uuid();
const Limit = z.number().int().min(1).max(1000);
const Offset = z.number().int().min(0).max(1_000_000);
const ThreadStatusSchema = z.enum(["idle", "busy", "interrupted", "error"]);

export const ThreadCreate = z.object({
  thread_id: Uuid.optional(),
  metadata: Metadata.optional(),
  if_exists: z.enum(["raise", "do_nothing"]).optional(),
  graph_id: safeKey(0, 128).optional(),
  ttl: z.unknown().optional(),
  supersteps: z.unknown().optional(),
});

export const ThreadSearch = z.object({
  metadata: Metadata.optional(),
  status: ThreadStatusSchema.optional(),
  limit: Limit.optional(),
  offset: Offset.optional(),
  ids: z.array(Uuid).max(1000).optional(),
  values: z.unknown().optional(),
  sort_by: z.string().max(64).optional(),
  sort_order: z.enum(["asc", "desc"]).optional(),
  select: z.array(z.string().max(64)).max(32).optional(),
  extract: z.unknown().optional(),
});

export const RunListQuery = z.object({
  limit: Limit.optional(),
  offset: Offset.optional(),
  status: z.enum(["pending", "running", "success", "error", "interrupted", "timeout"]).optional(),
});

export const ThreadCount = z.object({ metadata: Metadata.optional(), status: ThreadStatusSchema.optional(), values: z.unknown().optional() });

export const ThreadPatch = z.object({ metadata: Metadata });

export const HistoryQuery = z.object({
  limit: Limit.optional(),
  before: z.union([CheckpointId, z.object({ checkpoint_id: CheckpointId }).passthrough()]).optional(),
  checkpoint: z.object({ checkpoint_id: CheckpointId.optional() }).passthrough().optional(),
  metadata: Metadata.optional(),
});

export const AssistantSearch = z.object({
  graph_id: z.string().max(128).optional(),
  name: z.string().max(128).optional(),
  metadata: Metadata.optional(),
  limit: Limit.optional(),
  offset: Offset.optional(),
  sort_by: z.string().max(64).optional(),
  sort_order: z.enum(["asc", "desc"]).optional(),
  select: z.array(z.string().max(64)).max(32).optional(),
});

const TextBlock = z.object({ type: z.literal("text"), text: safeText(MAX_REQUEST_CHARS) }).strict();

/** The one message a request carries: from the user, plain text. */
const UserMessage = z
  .object({
    type: z.enum(["human", "user"]).optional(),
    role: z.enum(["human", "user"]).optional(),
    // NUL and lone surrogates are refused (422), not repaired: the request is what the user meant to send, and they can fix it.
    content: z.union([safeText(Number.MAX_SAFE_INTEGER), z.array(TextBlock).min(1).max(16)]),
    id: safeKey(1, 128).optional(),
  })
  .strict()
  .refine((message) => message.type !== undefined || message.role !== undefined, "a message needs type \"human\" or role \"user\"");

/** Run input: exactly one new user message. Any other state key is a state write and is refused. */
export const RunInput = z.object({ messages: z.array(UserMessage).length(1) }).strict();

const StreamMode = z.enum(STREAM_MODES);

export const RunCreate = z.object({
  assistant_id: safeKey(1, 128),
  input: RunInput.nullable().optional(),
  command: z
    .object({ resume: z.unknown().superRefine(safeJson(MAX_RESUME_DEPTH)) })
    .strict()
    .refine((command) => command.resume !== undefined && command.resume !== null, { message: "command.resume is required (a review decision)", path: ["resume"] })
    .nullable()
    .optional(),
  metadata: Metadata.nullable().optional(),
  stream_mode: z.union([StreamMode, z.array(StreamMode).max(STREAM_MODES.length)]).optional(),
  stream_subgraphs: z.boolean().optional(),
  stream_resumable: z.boolean().optional(),
  checkpoint_id: CheckpointId.nullable().optional(),
  checkpoint: z
    .object({
      checkpoint_id: CheckpointId.nullable().optional(),
      checkpoint_ns: safeKey(0, 256).optional(),
      thread_id: safeKey(0, 128).nullable().optional(),
      // Sent by useStream with a thread head; ignored.
      checkpoint_map: z.record(z.string().max(256), z.unknown()).nullable().optional(),
    })
    .strict()
    .nullable()
    .optional(),
  multitask_strategy: z.enum(["reject", "interrupt", "rollback", "enqueue"]).optional(),
  if_not_exists: z.enum(["create", "reject"]).optional(),
  on_disconnect: z.enum(["cancel", "continue"]).optional(),
  on_completion: z.enum(["delete", "keep"]).optional(),
  interrupt_before: z.union([z.literal("*"), z.array(z.string().max(64)).max(16)]).optional(),
  interrupt_after: z.union([z.literal("*"), z.array(z.string().max(64)).max(16)]).optional(),
  // Accepted and ignored: identity and routing are the server's (see app.ts).
  config: z.unknown().optional(),
  context: z.unknown().optional(),
  webhook: z.unknown().optional(),
  feedback_keys: z.unknown().optional(),
  after_seconds: z.unknown().optional(),
  durability: z.unknown().optional(),
  checkpoint_during: z.unknown().optional(),
  langsmith_tracer: z.unknown().optional(),
  strict_resume: z.unknown().optional(),
});
export type RunCreateBody = z.infer<typeof RunCreate>;

/**
 * Parses a body against a schema; failures are `invalid_request` naming the
 * first bad field (never echoing its value).
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "body";
    throw new ApiError("invalid_request", `${where}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

/**
 * A resume value sent outside a run body (the reviewer inbox): checked as
 * `command.resume` is, since it is checkpointed as sent. Throws
 * `invalid_request` naming the path inside it.
 */
export function assertSafeResume(value: unknown): void {
  const unsafe = findUnsafeJson(value, MAX_RESUME_DEPTH);
  if (unsafe) throw new ApiError("invalid_request", `${unsafe.path.length > 0 ? unsafe.path.join(".") : "body"}: ${unsafe.reason}`);
}

/** A checkpoint id from a path: a safe identifier, or `invalid_request` naming `checkpoint_id`. */
export function checkpointIdParam(value: string): string {
  return parseBody(z.object({ checkpoint_id: CheckpointId }), { checkpoint_id: value }).checkpoint_id;
}

/** The request text of a run input. */
export function requestText(input: z.infer<typeof RunInput>): string {
  const content = input.messages[0]!.content;
  const text = typeof content === "string" ? content : content.map((block) => block.text).join("\n");
  if (text.trim() === "") throw new ApiError("invalid_request", "input.messages.0.content: the request is empty");
  if (text.length > MAX_REQUEST_CHARS) throw new ApiError("invalid_request", `input.messages.0.content: longer than ${MAX_REQUEST_CHARS} characters`);
  return text;
}

/** The graph input for a request: one HumanMessage built by us (no client-chosen kwargs). */
export function toGraphInput(input: z.infer<typeof RunInput>): { messages: HumanMessage[] } {
  const message = input.messages[0]!;
  return { messages: [new HumanMessage({ content: requestText(input), ...(message.id ? { id: message.id } : {}) })] };
}

export function streamModes(value: RunCreateBody["stream_mode"]): ClientStreamMode[] {
  if (value === undefined) return ["values"];
  const modes = Array.isArray(value) ? value : [value];
  return modes.length === 0 ? ["values"] : [...new Set(modes)];
}

/**
 * JSON.parse that refuses prototype-polluting keys anywhere in the body.
 * Throws `invalid_json` for anything that is not JSON.
 */
export function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text, (key, value: unknown) => {
      if (key === "__proto__" || key === "constructor" || key === "prototype") throw new ApiError("invalid_request", `the key ${JSON.stringify(key)} is not allowed`);
      return value;
    });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError("invalid_json", "the body is not valid JSON");
  }
}
