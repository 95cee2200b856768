/**
 * The run request bodies (`POST /threads/{id}/runs…`, `POST /runs…`), as
 * zod schemas with the SDK's field names: the one user message a run input
 * carries, and every run option, each honoured or refused by name.
 */
import { HumanMessage } from "@langchain/core/messages";
import { z } from "zod";
import { unsafeKeyReason } from "../../policy/safe-text.js";
import {
  CheckpointId,
  clientMetadata,
  MAX_RESUME_DEPTH,
  Metadata,
  parseBody,
  safeJson,
  safeKey,
  safeText,
} from "../request-fields.js";
import { STREAM_MODES, type ClientStreamMode } from "./types.js";
import { ApiError } from "../../errors.js";

/** Longest request text a user may send. */
export const MAX_REQUEST_CHARS = 8_000;

const TextBlock = z.object({ type: z.literal("text"), text: safeText(MAX_REQUEST_CHARS) }).strict();

/** The one message a request carries: from the user, plain text. */
const UserMessage = z
  .object({
    type: z.enum(["human", "user"]).optional(),
    role: z.enum(["human", "user"]).optional(),
    // NUL and lone surrogates are refused (422), not repaired: the request is what the user meant to send, and they can fix it.
    content: z.union([safeText(Number.MAX_SAFE_INTEGER), z.array(TextBlock).min(1).max(16)]),
    id: safeKey(1, 128).optional(),
    // What RemoteGraph sends for a LangChain HumanMessage (`toDict()`): accepted empty, never carried over.
    additional_kwargs: z.object({}).strict().optional(),
    response_metadata: z.object({}).strict().optional(),
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
 * checks.ts) and is then dropped; the server records its own outcome.
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

/** Stream modes the SDK knows that this server does not serve: refused by name, never ignored (none today). */
const UNSERVED_STREAM_MODES: readonly string[] = [];
const StreamMode = z.enum(STREAM_MODES);

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
    // Checked key by key by `clientRunConfig`: identity and configuration are the server's
    // (DESIGN §10); only `config.recursion_limit` is honoured, every other key is refused by name.
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
 * step, a resume with nothing pending is always refused (strict), and streams
 * can always be resumed (`Last-Event-ID`). `after_seconds` and the multitask
 * strategies are honoured by the run queue (start.ts).
 */
export function refuseUnsupported(request: RunCreateBody, where: "background" | "stream" | "wait"): void {
  const refuse = (message: string) => {
    throw new ApiError("unsupported", message);
  };
  const present = (value: unknown) => value !== undefined && value !== null;
  if (present(request.feedback_keys) && !(Array.isArray(request.feedback_keys) && request.feedback_keys.length === 0))
    refuse("feedback_keys is not supported (no LangSmith)");
  if (present(request.langsmith_tracer)) refuse("langsmith_tracer is not supported (no LangSmith)");
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
    if (UNSERVED_STREAM_MODES.includes(mode))
      refuse(`stream mode "${mode}" is not supported; the others (${STREAM_MODES.join(", ")}) are`);
  }
  // A background run has no connection whose end could cancel it.
  if (where === "background" && request.on_disconnect === "cancel")
    refuse('on_disconnect "cancel" needs a connection: use it with runs/stream or runs/wait');
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

/** The highest `config.recursion_limit` a client may name (the budgets cap it further). */
const MAX_CLIENT_RECURSION_LIMIT = 10_000;
/** Most `config.tags` one run may carry, and the longest tag. */
export const MAX_RUN_TAGS = 32;
export const MAX_TAG_CHARS = 128;
/** The longest `config.run_name`. */
export const MAX_RUN_NAME_CHARS = 256;

/** What a run request's `config` sets that the server honours. */
export interface ClientRunConfig {
  /** LangGraph's recursion limit the client asked for (capped by the run's budgets when the run starts). */
  recursionLimit?: number;
  /** `config.tags`: labels for tracing and search, on the run's record, its events and spans. */
  tags?: string[];
  /** `config.run_name`: the name of the run's root (LangChain's `runName`). */
  runName?: string;
  /** `config.metadata`, after the metadata rule (`clientMetadata`): merged under the request's `metadata`. */
  metadata?: Record<string, unknown>;
}

/**
 * A run request's `config` and `context`, honoured or refused key by key:
 * `config.recursion_limit` is honoured (capped by the run's budgets);
 * `config.tags`, `config.run_name` and `config.metadata` label the run
 * (bounded; the metadata loses the keys the server owns, as top-level
 * metadata does); `config.configurable` may be empty or name this thread
 * (`thread_id`), as clients send it by default; an empty `config` or
 * `context` is nothing. Every other key is 422 `unsupported` naming it
 * (`config.<key>`, `config.configurable.<key>`, `context.<key>`):
 * identity and configuration are the server's.
 */
export function clientRunConfig(request: RunCreateBody, threadId: string): ClientRunConfig {
  const config = objectOrNothing(request.config, "config");
  const context = objectOrNothing(request.context, "context");
  const first = Object.keys(context)[0];
  if (first !== undefined) throw new ApiError("unsupported", `${keyPath("context", first)}: context is the server's`);
  const result: ClientRunConfig = {};
  for (const [key, value] of Object.entries(config)) {
    if (key === "recursion_limit") {
      // RemoteGraph sends `recursion_limit: null`-like absences as nothing; null is nothing too.
      if (value === null) continue;
      if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > MAX_CLIENT_RECURSION_LIMIT)
        throw new ApiError(
          "invalid_request",
          `config.recursion_limit: an integer from 1 to ${MAX_CLIENT_RECURSION_LIMIT} is required`,
        );
      result.recursionLimit = value as number;
    } else if (key === "tags") {
      if (value !== null) result.tags = runTags(value);
    } else if (key === "run_name") {
      if (value !== null) result.runName = runName(value);
    } else if (key === "metadata") {
      if (value !== null) result.metadata = clientMetadata(parseBody(Metadata, value, "config.metadata"));
    } else if (key === "configurable") {
      for (const [name, item] of Object.entries(objectOrNothing(value, "config.configurable"))) {
        if (name !== "thread_id")
          throw new ApiError(
            "unsupported",
            `${keyPath("config.configurable", name)}: the run's configuration is the server's`,
          );
        if (typeof item !== "string" || item.toLowerCase() !== threadId)
          throw new ApiError("invalid_request", "config.configurable.thread_id: names another thread");
      }
    } else {
      throw new ApiError(
        "unsupported",
        `${keyPath("config", key)}: only recursion_limit, tags, run_name, metadata and configurable are honoured`,
      );
    }
  }
  return result;
}

/** `config.tags`: an array of at most MAX_RUN_TAGS identifiers, each 1 to MAX_TAG_CHARS characters; duplicates once. */
function runTags(value: unknown): string[] {
  if (!Array.isArray(value)) throw new ApiError("invalid_request", "config.tags: must be an array of strings");
  if (value.length > MAX_RUN_TAGS) throw new ApiError("invalid_request", `config.tags: at most ${MAX_RUN_TAGS} tags`);
  value.forEach((tag, index) => {
    if (typeof tag !== "string" || tag.length < 1 || tag.length > MAX_TAG_CHARS)
      throw new ApiError("invalid_request", `config.tags.${index}: a string of 1 to ${MAX_TAG_CHARS} characters`);
    const unsafe = unsafeKeyReason(tag);
    if (unsafe) throw new ApiError("invalid_request", `config.tags.${index}: ${unsafe}`);
  });
  return [...new Set(value as string[])];
}

/** `config.run_name`: an identifier of 1 to MAX_RUN_NAME_CHARS characters. */
function runName(value: unknown): string {
  if (typeof value !== "string" || value.length < 1 || value.length > MAX_RUN_NAME_CHARS)
    throw new ApiError("invalid_request", `config.run_name: a string of 1 to ${MAX_RUN_NAME_CHARS} characters`);
  const unsafe = unsafeKeyReason(value);
  if (unsafe) throw new ApiError("invalid_request", `config.run_name: ${unsafe}`);
  return value;
}

/** An optional object field: its entries, none when null or absent; `invalid_request` when it is not an object. */
function objectOrNothing(value: unknown, where: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value))
    throw new ApiError("invalid_request", `${where}: must be an object`);
  return value as Record<string, unknown>;
}

/** `where.key`, the key quoted when it is not a plain identifier, and bounded. */
function keyPath(where: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(key)
    ? `${where}.${key}`
    : `${where}[${JSON.stringify(key.slice(0, 64))}]`;
}
