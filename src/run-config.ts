/**
 * The configurable keys of a run, in one place. Every entry point (the API
 * server, the CLI, Studio's auth hook, the bench, the test harnesses) builds a
 * run's config with {@link runConfigFor}; every node reads it with the readers
 * below. No other file spells a configurable key.
 *
 * The principal here is the **actor**: who sent this request (the owner, or
 * a reviewer answering a review). It comes from the host (the verified token,
 * the CLI's directory lookup), never from anything a client or the model
 * sends. The run's **owner**, on whose behalf every effect happens, is the
 * actor that started the run; plan records it in `state.run` and
 * `graph/owner.ts` reads it back with its current permissions.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { PrincipalSchema, type Principal } from "./auth/principal.js";
import { ConfigError } from "./errors.js";

/** LangGraph's own keys, and the one the LangGraph API uses for the verified user. */
const THREAD_ID = "thread_id";
const CHECKPOINT_ID = "checkpoint_id";
const CHECKPOINT_NS = "checkpoint_ns";
const AUTH_USER = "langgraph_auth_user";
/** The LangGraph API (Studio) puts its run id here. */
const API_RUN_ID = "run_id";
/** Ours. */
const RUN_ID = "warrant_run_id";
const RUN_BOUND = "warrant_run_bound";

/** Keys a client may never set: anything identity- or run-shaped. Studio's auth hook strips these. */
export const HOST_OWNED_KEYS = [
  AUTH_USER,
  "langgraph_auth_user_id",
  "langgraph_auth_permissions",
  "user_id",
  RUN_ID,
  RUN_BOUND,
] as const;

/**
 * The configurable keys a client may see (in a checkpoint's config, as the
 * LangGraph API shows it): where the checkpoint is, nothing about who runs it.
 * Every other key of a run's configurable is the host's (`HOST_OWNED_KEYS`,
 * LangGraph's internal `__pregel_*`) and never leaves the server.
 */
export const CLIENT_VISIBLE_KEYS = [THREAD_ID, CHECKPOINT_NS, CHECKPOINT_ID, "checkpoint_map"] as const;

/**
 * Host-owned keys that name the principal or the run's binding: never sent to
 * a client at any depth, inside a `configurable` or not. (`user_id` and
 * `warrant_run_id` are ordinary data elsewhere: a tool argument, a run's
 * `outcome.warrant_run_id`; inside a configurable they are dropped with every
 * other key not in {@link CLIENT_VISIBLE_KEYS}.)
 */
export const NEVER_TO_CLIENT_KEYS = [
  AUTH_USER,
  "langgraph_auth_user_id",
  "langgraph_auth_permissions",
  RUN_BOUND,
] as const;

export interface RunIdentity {
  threadId: string;
  /** The id of this invocation (the API's run id); a new Warrant run takes it as its id. */
  runId?: string | undefined;
  /** Who sent this request. */
  principal: Principal;
  /** Values fixed for the run by the host from the request (contract `run_bound`). */
  runBound?: Record<string, string> | undefined;
  /** Start from this checkpoint (a fork, already checked by the server). */
  checkpointId?: string | undefined;
}

export interface RunConfigurable {
  configurable: Record<string, unknown>;
}

/** The one writer of a run's configurable keys. */
export function runConfigFor(identity: RunIdentity): RunConfigurable {
  return {
    configurable: {
      [THREAD_ID]: identity.threadId,
      [AUTH_USER]: identity.principal,
      [RUN_BOUND]: identity.runBound ?? {},
      ...(identity.runId ? { [RUN_ID]: identity.runId } : {}),
      ...(identity.checkpointId ? { [CHECKPOINT_ID]: identity.checkpointId } : {}),
    },
  };
}

/** The config that reads a thread's state (no principal: reading state runs no node). */
export function threadConfig(threadId: string, checkpointId?: string | null): RunConfigurable {
  return { configurable: { [THREAD_ID]: threadId, ...(checkpointId ? { [CHECKPOINT_ID]: checkpointId } : {}) } };
}

type AnyConfig = RunnableConfig | undefined;

function configurable(config: AnyConfig): Record<string, unknown> {
  const value = config?.configurable;
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

export function threadIdFrom(config: AnyConfig): string {
  const value = configurable(config)[THREAD_ID];
  return typeof value === "string" && value.length > 0 ? value : "no-thread";
}

/** The invocation's run id: ours, else the LangGraph API's (Studio), else its metadata's; undefined when none was given. */
export function runIdFrom(config: AnyConfig): string | undefined {
  const keys = configurable(config);
  for (const value of [
    keys[RUN_ID],
    keys[API_RUN_ID],
    (config?.metadata as Record<string, unknown> | undefined)?.[API_RUN_ID],
  ]) {
    if (typeof value === "string" && value.length > 0 && value.length <= 128) return value;
  }
  return undefined;
}

/** The checkpoint a config points at, if any. */
export function checkpointIdFrom(config: AnyConfig): string | undefined {
  const value = configurable(config)[CHECKPOINT_ID];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** The checkpoint reference of a snapshot's config, as the API shows it. */
export function checkpointRefOf(config: AnyConfig): {
  thread_id: unknown;
  checkpoint_ns: unknown;
  checkpoint_id: unknown;
} {
  const keys = configurable(config);
  return {
    thread_id: keys[THREAD_ID] ?? null,
    checkpoint_ns: keys[CHECKPOINT_NS] ?? "",
    checkpoint_id: keys[CHECKPOINT_ID] ?? null,
  };
}

/**
 * The actor: the authenticated principal of this request. Re-read on every
 * node call, so a resume acts for the resuming request.
 */
export function principalFrom(config: AnyConfig): Principal {
  const parsed = PrincipalSchema.safeParse(configurable(config)[AUTH_USER]);
  if (!parsed.success) {
    throw new ConfigError("principal_unknown", "the run has no authenticated principal");
  }
  return parsed.data;
}

/** Run-bound values the host fixed for this run (set server-side, never from a client body). */
export function runBoundFrom(config: AnyConfig): Record<string, unknown> {
  const value = configurable(config)[RUN_BOUND];
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * For the LangGraph API (Studio), which builds the run config itself from
 * what the client sent: removes every host-owned key a client put there and
 * sets the verified user, in the keys that API uses.
 */
export function stampVerifiedUser(
  configurable: Record<string, unknown>,
  user: { identity: string; permissions: readonly string[] },
): void {
  for (const key of HOST_OWNED_KEYS) delete configurable[key];
  configurable[AUTH_USER] = user;
  configurable["langgraph_auth_user_id"] = user.identity;
  configurable["langgraph_auth_permissions"] = [...user.permissions];
  configurable["user_id"] = user.identity;
}
