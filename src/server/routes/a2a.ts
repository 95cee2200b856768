/**
 * The A2A endpoints: each served assistant as an A2A agent.
 *
 *   GET  /.well-known/agent-card.json?assistant_id=agent   the agent card (public: it names no user)
 *   POST /a2a/{assistant_id}                               JSON-RPC, behind the auth gate
 *
 * The wire is the SDK's: its v1.0 JSON-RPC transport (`SendMessage`,
 * `SendStreamingMessage`, `GetTask`, `CancelTask`) with `A2A-Version: 1.0`,
 * its v0.3 one (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`,
 * what LangGraph's Agent Server speaks) without the header or with `0.3`.
 * What the methods do is a2a-agent.ts. Every answer to a JSON-RPC body is a
 * JSON-RPC envelope (typed code, `ErrorInfo` with the API's code); nothing a
 * client sends gets a 5xx.
 */
import { AgentCard, formatSSEErrorEvent, formatSSEEvent } from "@a2a-js/sdk";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { JsonRpcTransportHandler, ServerCallContext, type User, validateVersion } from "@a2a-js/sdk/server";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import type { Context, Hono } from "hono";
import { stream } from "hono/streaming";
import { z } from "zod";
import type { Principal } from "../../auth/principal.js";
import { logLine } from "../../secrets/process-scanner.js";
import { a2aAgent } from "../a2a-agent.js";
import { agentCardFor } from "../a2a-card.js";
import { notFound } from "../api-error.js";
import type { Env, RouteContext } from "../context.js";
import { originOf } from "./mcp.js";

const VERSION_HEADER = "A2A-Version";
/** Most parts one message may carry. */
const MAX_PARTS = 16;
const LEGACY_VERSION = "0.3";

/** The request's principal as the SDK's user (the SDK reads only its name). */
class PrincipalUser implements User {
  constructor(readonly principal: Principal) {}
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return this.principal.user_id;
  }
}

export interface A2ARouteOptions {
  waitMs?: number | undefined;
}

/** The agent card, before the auth gate: discovery needs no token, and the card names no user. */
export function registerAgentCardRoute(app: Hono<Env>, assistants: () => string[]): void {
  app.get("/.well-known/agent-card.json", (c) => {
    const assistantId = c.req.query("assistant_id") ?? "agent";
    if (!assistants().includes(assistantId)) throw notFound("assistant");
    c.header("Vary", VERSION_HEADER);
    return c.json(agentCardJson(agentCardFor(assistantId, originOf(c))));
  });
}

export function registerA2ARoutes(app: Hono<Env>, context: RouteContext, options: A2ARouteOptions = {}): void {
  app.post("/a2a/:assistant_id", async (c) => {
    const assistantId = c.req.param("assistant_id");
    context.manager.graph(assistantId);
    const card = agentCardFor(assistantId, originOf(c));
    const principal = context.principalOf(c);
    const requested = c.req.header(VERSION_HEADER) || undefined;
    const legacy = (requested ?? LEGACY_VERSION) === LEGACY_VERSION;
    const mapError = legacy
      ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError
      : JsonRpcTransportHandler.mapToJSONRPCError;
    const body = await c.req.text();
    const parsed = parseOrText(body);
    const id = requestIdOf(parsed);
    try {
      refuseMistypedParts(parsed);
      const call = new ServerCallContext({
        user: new PrincipalUser(principal),
        ...(requested ? { requestedVersion: requested } : {}),
      });
      validateVersion(call.requestedVersion, card, "JSONRPC");
      const handler = a2aAgent({ context, assistantId, principal, origin: originOf(c), card, waitMs: options.waitMs });
      const transport = legacy ? new LegacyJsonRpcTransportHandler(handler) : new JsonRpcTransportHandler(handler);
      const answer = await transport.handle(parsed as string | Record<string, unknown>, call);
      if (!isAsyncIterable(answer)) return c.json(answer, 200);
      return await streamAnswer(c, answer, id, mapError);
    } catch (error) {
      return c.json({ jsonrpc: "2.0", id, error: mapError(withoutDetail(error)) }, 200);
    }
  });
}

/** An A2A error as it is; anything else (a fault of ours) logged, and answered without its text. */
function withoutDetail(error: unknown): unknown {
  if (typeof (error as { toErrorInfo?: unknown } | null)?.toErrorInfo === "function") return error;
  console.error(logLine(`warrant-server: A2A request failed: ${String(error)}`));
  return new Error("the server failed to handle the request");
}

/** A streamed answer as SSE; an error before the first event is a plain JSON-RPC error. */
async function streamAnswer(
  c: Context<Env>,
  events: AsyncIterable<unknown>,
  id: string | number | null,
  mapError: (error: unknown) => unknown,
): Promise<Response> {
  const iterator = events[Symbol.asyncIterator]();
  let first: IteratorResult<unknown>;
  try {
    first = await iterator.next();
  } catch (error) {
    return c.json({ jsonrpc: "2.0", id, error: mapError(error) }, 200);
  }
  c.header("Content-Type", "text/event-stream");
  c.header("Cache-Control", "no-cache");
  return stream(c, async (out) => {
    try {
      if (!first.done) await out.write(formatSSEEvent(first.value));
      for (let next = await iterator.next(); !next.done; next = await iterator.next())
        await out.write(formatSSEEvent(next.value));
    } catch (error) {
      await out.write(formatSSEErrorEvent({ jsonrpc: "2.0", id, error: mapError(error) } as never));
    }
  });
}

/** The card as JSON: the SDK's codec of the A2A schema (`AgentCard.toJSON`). */
function agentCardJson(card: AgentCard): unknown {
  return AgentCard.toJSON(card);
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === "function";
}

/** The body as JSON, or as the text it is (the transport answers that with its parse error). */
function parseOrText(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

/** The request's id when the body is a JSON-RPC request with a usable one, for error envelopes. */
function requestIdOf(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === "string" || (typeof id === "number" && Number.isInteger(id)) ? id : null;
}

/**
 * A message's parts as the protocol types them: the SDK's codec turns a
 * number in a `text` field into text, so a mistyped part is refused here.
 */
const PartsShape = z.object({
  params: z
    .object({
      message: z
        .object({
          parts: z
            .array(z.looseObject({ text: z.string().optional(), kind: z.string().optional() }))
            .max(MAX_PARTS)
            .optional(),
        })
        .optional(),
    })
    .optional(),
});

function refuseMistypedParts(body: unknown): void {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return;
  const checked = PartsShape.safeParse(body);
  if (!checked.success)
    throw new RequestMalformedError({
      message: `${checked.error.issues[0]?.path.join(".") ?? "params"}: not a message part the protocol defines`,
      metadata: { code: "invalid_request" },
    });
}
