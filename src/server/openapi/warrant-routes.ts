/**
 * Warrant's own routes beside LangGraph's: liveness and discovery, the
 * reviewer inbox, servers' questions (elicitations), the OAuth callback, the
 * operator routes of the CLI, the chat page's routes, the agent endpoints
 * (MCP, A2A) and this document itself.
 */
import { z } from "zod";
import { AnswerSchema } from "../routes/elicitations.js";
import { CallbackSchema } from "../routes/oauth-callback.js";
import { ApproveBody, ReplayBody } from "../routes/operator.js";
import { DevTokenRequest } from "../web.js";
import { empty, html, json, type RouteSpec } from "./registry.js";
import { ElicitationSchema, Health, Info, ReviewSchema } from "./responses.js";
import { ResumeSchema } from "../../policy/resume.js";

const JsonRpc = z.looseObject({ jsonrpc: z.literal("2.0") });

const discovery: RouteSpec[] = [
  {
    method: "get",
    path: "/healthz",
    tag: "server",
    summary: "Readiness: the database answers",
    auth: "none",
    ok: { 200: json("ready", Health) },
    other: { 503: json("the database is unreachable", Health) },
  },
  { method: "get", path: "/ok", tag: "server", summary: "Liveness", auth: "none", ok: { 200: json("alive", Health) } },
  {
    method: "get",
    path: "/info",
    tag: "server",
    summary: "What the server is",
    auth: "none",
    ok: { 200: json("", Info) },
  },
  {
    method: "get",
    path: "/openapi.json",
    tag: "server",
    summary: "This document",
    auth: "none",
    ok: { 200: json("OpenAPI 3.1") },
  },
  {
    method: "get",
    path: "/docs",
    tag: "server",
    summary: "This document, as a page",
    auth: "none",
    ok: { 200: html("") },
  },
  {
    method: "get",
    path: "/.well-known/agent-card.json",
    tag: "agents",
    summary: "The A2A agent card",
    auth: "none",
    ok: { 200: json("the card") },
  },
  {
    method: "post",
    path: "/a2a/{assistant_id}",
    tag: "agents",
    summary: "A2A JSON-RPC (message/send, message/stream, tasks/*)",
    auth: "bearer",
    body: JsonRpc,
    ok: { 200: { description: "a JSON-RPC answer, or its event stream", type: "any" } },
  },
  {
    method: "post",
    path: "/mcp",
    tag: "agents",
    summary: "MCP (streamable HTTP, stateless): the assistants as tools",
    auth: "bearer",
    body: JsonRpc,
    ok: { 200: { description: "a JSON-RPC answer", type: "any" }, 202: empty("a notification, accepted") },
    other: { 400: json("a JSON-RPC error", JsonRpc) },
  },
  {
    method: "get",
    path: "/mcp",
    tag: "agents",
    summary: "No server-sent stream",
    auth: "bearer",
    ok: {},
    other: { 405: json("a JSON-RPC error", JsonRpc) },
  },
  {
    method: "delete",
    path: "/mcp",
    tag: "agents",
    summary: "No sessions",
    auth: "bearer",
    ok: {},
    other: { 405: json("a JSON-RPC error", JsonRpc) },
  },
];

const reviews: RouteSpec[] = [
  {
    method: "get",
    path: "/reviews",
    tag: "reviews",
    summary: "The reviews the caller may decide",
    auth: "bearer",
    ok: { 200: json("the inbox", z.looseObject({ reviews: z.array(ReviewSchema) })) },
  },
  {
    method: "get",
    path: "/reviews/{thread_id}",
    tag: "reviews",
    summary: "One open review",
    auth: "bearer",
    ok: { 200: json("the review", ReviewSchema) },
  },
  {
    method: "post",
    path: "/reviews/{thread_id}",
    tag: "reviews",
    summary: "Decide a review (resumes the run)",
    auth: "bearer",
    body: ResumeSchema,
    ok: { 200: json("the decision, recorded") },
    errors: [403, 409, 429],
  },
  {
    method: "get",
    path: "/threads/{thread_id}/elicitations",
    tag: "elicitations",
    summary: "A thread's open questions from tool servers",
    auth: "bearer",
    ok: { 200: json("the questions", z.looseObject({ elicitations: z.array(ElicitationSchema) })) },
  },
  {
    method: "post",
    path: "/threads/{thread_id}/elicitations/{elicitation_id}",
    tag: "elicitations",
    summary: "Answer a question: accept with content, decline or cancel",
    auth: "bearer",
    body: AnswerSchema,
    ok: {
      200: json(
        "answered",
        z.looseObject({ elicitation_id: z.string(), status: AnswerSchema.options[0].shape.action }),
      ),
    },
    errors: [403, 409],
  },
];

const oauth: RouteSpec[] = [
  {
    method: "get",
    path: "/oauth/callback",
    tag: "oauth",
    summary: "Where a user's authorization server sends them back (page)",
    auth: "none",
    ok: { 200: html("the callback page") },
  },
  {
    method: "get",
    path: "/oauth/callback.js",
    tag: "oauth",
    summary: "The callback page's script",
    auth: "none",
    ok: { 200: { description: "JavaScript", type: "text/javascript" } },
  },
  {
    method: "post",
    path: "/oauth/callback",
    tag: "oauth",
    summary: "Complete a per-user authorization (code, state)",
    auth: "bearer",
    body: CallbackSchema,
    ok: {
      200: json(
        "connected",
        z.looseObject({ server: z.string(), thread_id: z.string(), run_id: z.string().nullable() }),
      ),
    },
    errors: [403],
  },
];

const operator: RouteSpec[] = [
  {
    method: "get",
    path: "/metrics",
    tag: "operator",
    summary: "Prometheus metrics, summed over the workers and per worker (text format 0.0.4)",
    auth: "operator",
    ok: { 200: { description: "the metrics, in Prometheus text format 0.0.4", type: "text/plain" } },
  },
  {
    method: "get",
    path: "/operator/runs/{run_id}/trace",
    tag: "operator",
    summary: "A run's trace",
    auth: "operator",
    ok: { 200: json("the trace") },
  },
  {
    method: "get",
    path: "/operator/audit/verify",
    tag: "operator",
    summary: "Verify the audit chain",
    auth: "operator",
    query: z.looseObject({ run_id: z.string().optional() }),
    ok: { 200: json("the verification") },
  },
  {
    method: "get",
    path: "/operator/tools",
    tag: "operator",
    summary: "Tools and their pins",
    auth: "operator",
    ok: { 200: json("the tools", z.looseObject({ tools: z.unknown() })) },
  },
  {
    method: "get",
    path: "/operator/tools/{name}",
    tag: "operator",
    summary: "A tool's pin",
    auth: "operator",
    ok: { 200: json("the pin", z.looseObject({ pin: z.unknown() })) },
  },
  {
    method: "post",
    path: "/operator/tools/{name}/approve",
    tag: "operator",
    summary: "Approve a tool's changed definition",
    auth: "operator",
    body: ApproveBody,
    ok: { 200: json("the pin", z.looseObject({ pin: z.unknown() })) },
    errors: [409],
  },
  {
    method: "post",
    path: "/operator/replay-records",
    tag: "operator",
    summary: "Recorded runs, for replay",
    auth: "operator",
    body: ReplayBody,
    ok: { 200: json("the records") },
  },
];

const page: RouteSpec[] = [
  { method: "get", path: "/", tag: "page", summary: "The chat page", auth: "none", ok: { 200: html("the page") } },
  {
    method: "get",
    path: "/assets/{file}",
    tag: "page",
    summary: "The page's built assets",
    auth: "none",
    ok: { 200: { description: "the file", type: "any" } },
  },
  {
    method: "get",
    path: "/ui/sign-in",
    tag: "page",
    summary: "How the page may sign in",
    auth: "none",
    ok: { 200: json("dev sign-in and OIDC issuers") },
  },
  {
    method: "get",
    path: "/dev/principals",
    tag: "page",
    summary: "Dev sign-in: the principals (dev mode only)",
    auth: "none",
    ok: { 200: json("the principals") },
  },
  {
    method: "post",
    path: "/dev/token",
    tag: "page",
    summary: "Dev sign-in: a token for a principal (dev mode only)",
    auth: "none",
    body: DevTokenRequest,
    ok: { 200: json("the token", z.looseObject({ token: z.string(), expires_in: z.number() })) },
  },
  {
    method: "get",
    path: "/ui/session",
    tag: "page",
    summary: "The signed-in user's principal, budgets and tools",
    auth: "bearer",
    ok: {
      200: json(
        "the session",
        z.looseObject({ principal: z.unknown(), budgets: z.unknown(), tools: z.array(z.unknown()) }),
      ),
    },
  },
];

export const WARRANT_ROUTES: RouteSpec[] = [...discovery, ...reviews, ...oauth, ...operator, ...page];
