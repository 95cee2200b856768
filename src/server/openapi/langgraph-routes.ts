/**
 * The LangGraph Agent Server routes Warrant serves (assistants, threads,
 * state, runs, store, crons), with the schemas the route modules validate
 * with. Options Warrant refuses on purpose are still listed: they answer 422
 * `unsupported`, by name.
 */
import { z } from "zod";
import {
  AssistantSearch,
  AssistantVersions,
  HistoryQuery,
  RunListQuery,
  StateAtCheckpoint,
  ThreadCount,
  ThreadCreate,
  ThreadPatch,
  ThreadSearch,
} from "../requests.js";
import { CronCountBody, CronCreate, CronSearchBody, CronUpdate } from "../routes/crons.js";
import { DeleteItem, ListNamespaces, PutItem, SearchItems, StoreItemQuery } from "../routes/store.js";
import { RunCreate } from "../runs/requests.js";
import { empty, json, sse, type RouteSpec } from "./registry.js";
import {
  AnyJson,
  AssistantSchema,
  Count,
  CronSchema,
  RunSchema,
  StoreItemSchema,
  ThreadRows,
  ThreadSchema,
  ThreadStateSchema,
} from "./responses.js";

const refused = (method: RouteSpec["method"], path: string, tag: string, summary: string): RouteSpec => ({
  method,
  path,
  tag,
  summary: `${summary} (refused: 422 unsupported)`,
  auth: "bearer",
  ok: {},
  errors: [422],
});

const T = "/threads/{thread_id}";
const R = `${T}/runs/{run_id}`;

const assistants: RouteSpec[] = [
  {
    method: "post",
    path: "/assistants/search",
    tag: "assistants",
    summary: "Search the served assistants",
    auth: "bearer",
    body: AssistantSearch,
    ok: { 200: json("the assistants", z.array(AssistantSchema)) },
  },
  {
    method: "post",
    path: "/assistants/count",
    tag: "assistants",
    summary: "Count the assistants",
    auth: "bearer",
    body: AssistantSearch,
    ok: { 200: json("how many", Count) },
  },
  {
    method: "post",
    path: "/assistants/{assistant_id}/versions",
    tag: "assistants",
    summary: "An assistant's versions (one)",
    auth: "bearer",
    body: AssistantVersions,
    ok: { 200: json("the versions", z.array(AssistantSchema)) },
  },
  refused("post", "/assistants/{assistant_id}/latest", "assistants", "Set an assistant's latest version"),
  {
    method: "get",
    path: "/assistants/{assistant_id}",
    tag: "assistants",
    summary: "An assistant",
    auth: "bearer",
    ok: { 200: json("the assistant", AssistantSchema) },
  },
  {
    method: "get",
    path: "/assistants/{assistant_id}/schemas",
    tag: "assistants",
    summary: "Its input, state, config and resume schemas",
    auth: "bearer",
    ok: { 200: json("JSON Schemas") },
  },
  {
    method: "get",
    path: "/assistants/{assistant_id}/graph",
    tag: "assistants",
    summary: "Its graph",
    auth: "bearer",
    ok: { 200: json("nodes and edges") },
  },
  {
    method: "get",
    path: "/assistants/{assistant_id}/subgraphs",
    tag: "assistants",
    summary: "Its subgraphs (none)",
    auth: "bearer",
    ok: { 200: json("by namespace") },
  },
  refused("post", "/assistants", "assistants", "Create an assistant"),
  refused("patch", "/assistants/{assistant_id}", "assistants", "Update an assistant"),
  refused("delete", "/assistants/{assistant_id}", "assistants", "Delete an assistant"),
];

const threads: RouteSpec[] = [
  {
    method: "post",
    path: "/threads",
    tag: "threads",
    summary: "Create a thread",
    auth: "bearer",
    body: ThreadCreate,
    ok: { 200: json("the thread", ThreadSchema) },
    errors: [409],
  },
  {
    method: "post",
    path: "/threads/search",
    tag: "threads",
    summary: "Search the caller's threads",
    auth: "bearer",
    body: ThreadSearch,
    ok: { 200: json("the threads", ThreadRows) },
  },
  {
    method: "post",
    path: "/threads/count",
    tag: "threads",
    summary: "Count the caller's threads",
    auth: "bearer",
    body: ThreadCount,
    ok: { 200: json("how many", Count) },
  },
  {
    method: "get",
    path: T,
    tag: "threads",
    summary: "A thread",
    auth: "bearer",
    ok: { 200: json("the thread", ThreadSchema) },
  },
  {
    method: "patch",
    path: T,
    tag: "threads",
    summary: "Update a thread's metadata",
    auth: "bearer",
    body: ThreadPatch,
    ok: { 200: json("the thread", ThreadSchema) },
  },
  {
    method: "delete",
    path: T,
    tag: "threads",
    summary: "Delete a thread",
    auth: "bearer",
    ok: { 204: empty("deleted") },
    errors: [409],
  },
  refused("post", `${T}/copy`, "threads", "Copy a thread"),
  refused("post", "/threads/prune", "threads", "Prune threads"),
  refused("get", `${T}/stream`, "threads", "Stream a thread"),
  {
    method: "get",
    path: `${T}/state`,
    tag: "state",
    summary: "The thread's current state",
    auth: "bearer",
    ok: { 200: json("the state", ThreadStateSchema) },
  },
  {
    method: "get",
    path: `${T}/state/{checkpoint_id}`,
    tag: "state",
    summary: "The state at a checkpoint",
    auth: "bearer",
    ok: { 200: json("the state", ThreadStateSchema) },
  },
  {
    method: "post",
    path: `${T}/state/checkpoint`,
    tag: "state",
    summary: "The state at a checkpoint (SDK form)",
    auth: "bearer",
    body: StateAtCheckpoint,
    ok: { 200: json("the state", ThreadStateSchema) },
  },
  { ...refused("post", `${T}/state`, "state", "Write state"), errors: [403] },
  { ...refused("patch", `${T}/state`, "state", "Write state"), errors: [403] },
  {
    method: "post",
    path: `${T}/history`,
    tag: "state",
    summary: "The thread's checkpoints, newest first",
    auth: "bearer",
    body: HistoryQuery,
    ok: { 200: json("the states", z.array(ThreadStateSchema)) },
  },
  {
    method: "get",
    path: `${T}/history`,
    tag: "state",
    summary: "The thread's checkpoints, newest first",
    auth: "bearer",
    query: z.object({ limit: z.string().optional(), before: z.string().optional() }),
    ok: { 200: json("the states", z.array(ThreadStateSchema)) },
  },
];

const RUN_ERRORS = [409, 429, 503];
const runs: RouteSpec[] = [
  ...(["", "/stream", "/wait"] as const).flatMap((kind): RouteSpec[] => [
    {
      method: "post",
      path: `${T}/runs${kind}`,
      tag: "runs",
      summary:
        kind === ""
          ? "Start a run in the background"
          : kind === "/stream"
            ? "Start a run and stream it"
            : "Start a run and wait",
      auth: "bearer",
      body: RunCreate,
      ok: { 200: kind === "/stream" ? sse("the run's events") : json(kind === "" ? "the run" : "the final values") },
      errors: RUN_ERRORS,
    },
    {
      method: "post",
      path: `/runs${kind}`,
      tag: "runs",
      summary: `Stateless: ${kind === "" ? "start a run" : kind === "/stream" ? "stream a run" : "run and wait"}`,
      auth: "bearer",
      body: RunCreate,
      ok: { 200: kind === "/stream" ? sse("the run's events") : json(kind === "" ? "the run" : "the final values") },
      errors: RUN_ERRORS,
    },
  ]),
  refused("post", "/runs/batch", "runs", "Batch runs"),
  refused("post", "/runs/cancel", "runs", "Cancel several runs"),
  {
    method: "get",
    path: `${T}/runs`,
    tag: "runs",
    summary: "The thread's runs",
    auth: "bearer",
    query: z.object({ limit: z.string().optional(), offset: z.string().optional(), status: RunListQuery.shape.status }),
    ok: { 200: json("the runs", z.array(RunSchema)) },
  },
  { method: "get", path: R, tag: "runs", summary: "A run", auth: "bearer", ok: { 200: json("the run", RunSchema) } },
  { ...refused("delete", R, "runs", "Delete a run"), errors: [409, 422] },
  {
    method: "post",
    path: `${R}/cancel`,
    tag: "runs",
    summary: "Cancel a run",
    auth: "bearer",
    query: z.object({ wait: z.string().optional(), action: z.enum(["interrupt", "rollback"]).optional() }),
    ok: { 202: empty("cancelling"), 204: empty("cancelled (with wait)") },
  },
  {
    method: "get",
    path: `${R}/join`,
    tag: "runs",
    summary: "Wait for a run",
    auth: "bearer",
    ok: { 200: json("the final values", AnyJson) },
  },
  {
    method: "get",
    path: `${R}/stream`,
    tag: "runs",
    summary: "Join a run's stream (Last-Event-ID resumes)",
    auth: "bearer",
    ok: { 200: sse("the run's events") },
  },
];

const store: RouteSpec[] = [
  {
    method: "put",
    path: "/store/items",
    tag: "store",
    summary: "Put an item",
    auth: "bearer",
    body: PutItem,
    ok: { 204: empty("stored") },
  },
  {
    method: "get",
    path: "/store/items",
    tag: "store",
    summary: "Get an item (null when absent)",
    auth: "bearer",
    query: StoreItemQuery,
    ok: { 200: json("the item", StoreItemSchema.nullable()) },
  },
  {
    method: "delete",
    path: "/store/items",
    tag: "store",
    summary: "Delete an item",
    auth: "bearer",
    body: DeleteItem,
    ok: { 204: empty("deleted") },
  },
  {
    method: "post",
    path: "/store/items/search",
    tag: "store",
    summary: "Search items",
    auth: "bearer",
    body: SearchItems,
    ok: { 200: json("the items", z.looseObject({ items: z.array(StoreItemSchema) })) },
  },
  {
    method: "post",
    path: "/store/namespaces",
    tag: "store",
    summary: "List namespaces",
    auth: "bearer",
    body: ListNamespaces,
    ok: { 200: json("the namespaces", z.looseObject({ namespaces: z.array(z.array(z.string())) })) },
  },
];

const crons: RouteSpec[] = [
  {
    method: "post",
    path: "/runs/crons",
    tag: "crons",
    summary: "Create a stateless cron",
    auth: "bearer",
    body: CronCreate,
    ok: { 200: json("the cron", CronSchema) },
    errors: [404, 429],
  },
  {
    method: "post",
    path: `${T}/runs/crons`,
    tag: "crons",
    summary: "Create a cron on a thread",
    auth: "bearer",
    body: CronCreate,
    ok: { 200: json("the cron", CronSchema) },
    errors: [429],
  },
  {
    method: "post",
    path: "/runs/crons/search",
    tag: "crons",
    summary: "Search crons",
    auth: "bearer",
    body: CronSearchBody,
    ok: { 200: json("the crons", z.array(CronSchema)) },
  },
  {
    method: "post",
    path: "/runs/crons/count",
    tag: "crons",
    summary: "Count crons",
    auth: "bearer",
    body: CronCountBody,
    ok: { 200: json("how many", Count) },
  },
  {
    method: "patch",
    path: "/runs/crons/{cron_id}",
    tag: "crons",
    summary: "Update a cron",
    auth: "bearer",
    body: CronUpdate,
    ok: { 200: json("the cron", CronSchema) },
  },
  {
    method: "delete",
    path: "/runs/crons/{cron_id}",
    tag: "crons",
    summary: "Delete a cron",
    auth: "bearer",
    ok: { 204: empty("deleted") },
  },
];

export const LANGGRAPH_ROUTES: RouteSpec[] = [...assistants, ...threads, ...runs, ...store, ...crons];
