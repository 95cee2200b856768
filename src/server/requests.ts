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
const RESERVED_METADATA = new Set([
  "owner",
  "tenant",
  "user_id",
  "graph_id",
  "assistant_id",
  "thread_id",
  "run_id",
  "langgraph_auth_user",
  "langgraph_auth_user_id",
  "langgraph_auth_permissions",
]);

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
    if (maxBytes !== undefined && JSON.stringify(value).length > maxBytes)
      context.addIssue({ code: "custom", message: `is larger than ${maxBytes} bytes` });
  };
}

const Metadata = z
  .record(z.string().min(1).max(128), z.unknown())
  .superRefine(safeJson(MAX_METADATA_DEPTH, MAX_METADATA_BYTES));
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
  .refine(
    (message) => message.type !== undefined || message.role !== undefined,
    'a message needs type "human" or role "user"',
  );

/**
 * A placeholder answer to a tool call, as agent-chat-ui puts before the
 * user's message for every tool call it sees without a result. The server
 * never takes a tool result from a client: such a message is accepted only
 * when it names a tool call of this thread that has no result (checked in
 * run-checks.ts) and is then dropped; the server records its own outcome.
 */
const ToolPlaceholder = z
  .object({
    type: z.literal("tool"),
    tool_call_id: safeKey(1, 128),
    id: safeKey(1, 128).optional(),
    name: safeKey(0, 128).optional(),
    content: z.union([safeText(MAX_REQUEST_CHARS), z.array(TextBlock).max(16)]),
  })
  .strict();

/** Most placeholders one request may carry (one per unanswered tool call of the last AI turn). */
const MAX_PLACEHOLDERS = 32;

/**
 * Run input: exactly one new user message, last, optionally preceded by
 * agent-chat-ui's tool-call placeholders. Any other state key is a state
 * write and is refused.
 */
export const RunInput = z
  .object({
    messages: z
      .array(z.union([UserMessage, ToolPlaceholder]))
      .min(1)
      .max(MAX_PLACEHOLDERS + 1),
  })
  .strict()
  .superRefine((input, context) => {
    const users = input.messages.filter((message) => message.type !== "tool");
    if (users.length !== 1 || input.messages.at(-1)?.type === "tool") {
      context.addIssue({ code: "custom", path: ["messages"], message: "exactly one user message, last, is required" });
    }
  });
export type RunInputBody = z.infer<typeof RunInput>;

/** The tool-call placeholders of a run input (agent-chat-ui's), in order. */
export function toolPlaceholders(input: RunInputBody): { tool_call_id: string; name: string | undefined }[] {
  return input.messages.flatMap((message) =>
    message.type === "tool" ? [{ tool_call_id: message.tool_call_id, name: message.name }] : [],
  );
}

/** The user message of a run input. */
function userMessage(input: RunInputBody): z.infer<typeof UserMessage> {
  const message = input.messages.find((item): item is z.infer<typeof UserMessage> => item.type !== "tool");
  if (!message) throw new ApiError("invalid_request", "input.messages: exactly one user message, last, is required");
  return message;
}

/** Stream modes the SDK knows that this server does not serve: refused by name, never ignored. */
const UNSERVED_STREAM_MODES = ["events"] as const;
const StreamMode = z.enum([...STREAM_MODES, ...UNSERVED_STREAM_MODES]);

/** `{}` or `null` beside a command means "no input" (agent-chat-ui sends `input: {}` with every resume). */
const emptyInput = (value: unknown) =>
  value === null || (typeof value === "object" && !Array.isArray(value) && Object.keys(value as object).length === 0);

export const RunCreate = z.preprocess(
  (body) => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
    const record = body as Record<string, unknown>;
    if (record["command"] !== undefined && record["command"] !== null && emptyInput(record["input"])) {
      const { input: _empty, ...rest } = record;
      return rest;
    }
    return body;
  },
  z.object({
    assistant_id: safeKey(1, 128),
    input: RunInput.nullable().optional(),
    command: z
      .object({ resume: z.unknown().superRefine(safeJson(MAX_RESUME_DEPTH)) })
      .strict()
      .refine((command) => command.resume !== undefined && command.resume !== null, {
        message: "command.resume is required (a review decision)",
        path: ["resume"],
      })
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
    // Stripped on purpose (DESIGN §10): identity and configuration are the server's, so a
    // client's config/context never reach a run, whatever they say.
    config: z.unknown().optional(),
    context: z.unknown().optional(),
    // The options below are checked by `refuseUnsupported`: each is either what the server
    // does anyway (accepted) or refused as `unsupported`, never silently ignored.
    // Checked (allowlist, addresses) by webhooks/run-webhook.ts before the run starts.
    webhook: z.unknown().optional(),
    feedback_keys: z.unknown().optional(),
    after_seconds: z.number().min(0).max(86_400).nullable().optional(),
    durability: z.enum(["sync", "async", "exit"]).nullable().optional(),
    checkpoint_during: z.boolean().nullable().optional(),
    langsmith_tracer: z.unknown().optional(),
    strict_resume: z.boolean().nullable().optional(),
  }),
);
export type RunCreateBody = z.infer<typeof RunCreate>;

/**
 * Refuses run options this server does not honour, each by name. What is
 * accepted is what happens: checkpoints are written synchronously at every
 * step, a resume with nothing pending is always refused (strict), a run starts
 * at once, and streams can always be resumed (`Last-Event-ID`).
 */
export function refuseUnsupported(request: RunCreateBody, where: "background" | "stream" | "wait"): void {
  const refuse = (message: string) => {
    throw new ApiError("unsupported", message);
  };
  const present = (value: unknown) => value !== undefined && value !== null;
  if (present(request.feedback_keys) && !(Array.isArray(request.feedback_keys) && request.feedback_keys.length === 0))
    refuse("feedback_keys is not supported (no LangSmith)");
  if (present(request.langsmith_tracer)) refuse("langsmith_tracer is not supported (no LangSmith)");
  if (present(request.after_seconds) && request.after_seconds !== 0)
    refuse("after_seconds is not supported: a run starts when it is created");
  if (present(request.durability) && request.durability !== "sync")
    refuse(`durability "${request.durability}" is not supported: checkpoints are always written synchronously`);
  if (request.checkpoint_during === false)
    refuse("checkpoint_during false is not supported: a checkpoint is written after every step");
  if (request.strict_resume === false)
    refuse("strict_resume false is not supported: a resume with nothing pending is always refused");
  const modes =
    request.stream_mode === undefined
      ? []
      : Array.isArray(request.stream_mode)
        ? request.stream_mode
        : [request.stream_mode];
  for (const mode of modes) {
    if ((UNSERVED_STREAM_MODES as readonly string[]).includes(mode))
      refuse(`stream mode "${mode}" is not supported; the others (${STREAM_MODES.join(", ")}) are`);
  }
  // A background run has no connection whose end could cancel it.
  if (where === "background" && request.on_disconnect === "cancel")
    refuse('on_disconnect "cancel" needs a connection: use it with runs/stream or runs/wait');
}

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

/** The request text of a run input. */
export function requestText(input: RunInputBody): string {
  const content = userMessage(input).content;
  const text = typeof content === "string" ? content : content.map((block) => block.text).join("\n");
  if (text.trim() === "") throw new ApiError("invalid_request", "input.messages.0.content: the request is empty");
  if (text.length > MAX_REQUEST_CHARS)
    throw new ApiError("invalid_request", `input.messages.0.content: longer than ${MAX_REQUEST_CHARS} characters`);
  return text;
}

/** The graph input for a request: one HumanMessage built by us (no client-chosen kwargs). */
export function toGraphInput(input: RunInputBody): { messages: HumanMessage[] } {
  const message = userMessage(input);
  return { messages: [new HumanMessage({ content: requestText(input), ...(message.id ? { id: message.id } : {}) })] };
}

export function streamModes(value: RunCreateBody["stream_mode"]): ClientStreamMode[] {
  if (value === undefined) return ["values"];
  const modes = (Array.isArray(value) ? value : [value]).filter((mode): mode is ClientStreamMode =>
    (STREAM_MODES as readonly string[]).includes(mode),
  );
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
      if (key === "__proto__" || key === "constructor" || key === "prototype")
        throw new ApiError("invalid_request", `the key ${JSON.stringify(key)} is not allowed`);
      return value;
    });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError("invalid_json", "the body is not valid JSON");
  }
}
