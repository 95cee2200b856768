/**
 * What every route module shares: the request's principal, JSON bodies, and
 * owner-scoped lookups. A thread or run that is not the caller's is
 * indistinguishable from one that does not exist (404 `not_found`).
 */
import type { Context } from "hono";
import type { StateSnapshot } from "@langchain/langgraph";
import type { Principal } from "../auth/principal.js";
import type { ThreadStore } from "../stores/thread-store.js";
import type { LedgerStore } from "../ports.js";
import type { ReviewRule } from "../policy/decision.js";
import type { RunRow, ThreadRow } from "../stores/thread-rows.js";
import { notFound } from "./api-error.js";
import { parseJson } from "./requests.js";
import { threadConfig } from "../run-config.js";
import { ownerOf, type ServedGraph } from "./runs/types.js";
import type { RunManager } from "./runs/manager.js";
import type { Webhooks } from "./webhooks/webhooks.js";

export type Env = { Variables: { principal: Principal } };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RouteContext {
  manager: RunManager;
  store: ThreadStore;
  ledger: LedgerStore;
  graphs: Map<string, ServedGraph>;
  /** Any served graph: they share one checkpointer and one state schema, so any of them reads any thread. */
  anyGraph(): ServedGraph;
  principalOf(c: Context<Env>): Principal;
  /** The request body as JSON (undefined when empty); `invalid_json` otherwise. */
  body(c: Context<Env>): Promise<unknown>;
  threadParam(c: Context<Env>): string;
  ownedThread(c: Context<Env>): Promise<ThreadRow>;
  ownedRun(c: Context<Env>, thread: ThreadRow): Promise<RunRow>;
  snapshotOf(threadId: string, checkpointId?: string): Promise<StateSnapshot>;
  deleteCheckpoints(threadId: string): Promise<void>;
  /** Interval of SSE heartbeat comments on run streams. */
  heartbeatMs: number;
  /**
   * Under a policy language engine: whether its policies let `approver` answer these reviews of `owner`'s run (the
   * `approve` action), else the refusal naming the policies that decided. Absent (or null): the review policy alone.
   */
  approverRefusal?:
    | ((
        approver: Principal,
        owner: Principal,
        reviews: { tool: string; rule: ReviewRule; approval: { action_id: string } }[],
      ) => Promise<{ message: string; policies: string[] } | null>)
    | undefined;
  /** Run webhooks (webhooks/webhooks.ts): checked and registered before a run starts; absent, `webhook` is refused. */
  webhooks?: Pick<Webhooks, "check" | "register"> | undefined;
}

export function routeContext(
  manager: RunManager,
  store: ThreadStore,
  ledger: LedgerStore,
  graphs: Map<string, ServedGraph>,
  heartbeatMs: number,
): RouteContext {
  const anyGraph = () => {
    const graph = graphs.get("agent") ?? [...graphs.values()][0];
    if (!graph) throw new Error("no graph is served");
    return graph;
  };
  const principalOf = (c: Context<Env>) => c.get("principal");
  const threadParam = (c: Context<Env>) => {
    const id = c.req.param("thread_id") ?? "";
    if (!UUID.test(id)) throw notFound("thread");
    return id.toLowerCase();
  };
  return {
    manager,
    store,
    ledger,
    graphs,
    heartbeatMs,
    anyGraph,
    principalOf,
    body: async (c) => parseJson(await c.req.text()),
    threadParam,
    async ownedThread(c) {
      const thread = await store.get(ownerOf(principalOf(c)), threadParam(c));
      if (!thread) throw notFound("thread");
      return thread;
    },
    async ownedRun(c, thread) {
      const runId = c.req.param("run_id") ?? "";
      if (!UUID.test(runId)) throw notFound("run");
      const run = await store.getRun(ownerOf(principalOf(c)), thread.thread_id, runId.toLowerCase());
      if (!run) throw notFound("run");
      return run;
    },
    snapshotOf: (threadId, checkpointId) => anyGraph().getState(threadConfig(threadId, checkpointId)),
    async deleteCheckpoints(threadId) {
      const saver = anyGraph().checkpointer;
      if (saver && typeof saver === "object" && "deleteThread" in saver && typeof saver.deleteThread === "function") {
        await (saver as { deleteThread(id: string): Promise<void> }).deleteThread(threadId);
      }
    },
  };
}
