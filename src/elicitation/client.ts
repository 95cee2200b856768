/**
 * Elicitation as a human step (MCP `elicitation/create`, form and URL mode). The
 * host declares the `elicitation` capability only when it has a broker to
 * ask the run's owner (`ElicitationBroker`); the model never sees the
 * question and never answers it.
 *
 * Which call a request belongs to: a server sends `elicitation/create` while
 * one of its `tools/call` requests is in flight. Over Streamable HTTP the
 * request arrives on that call's response stream, read in the call's async
 * context; over stdio the child's stdout is read outside it, so the call is
 * the one call in flight on that client. With none, or several and no async
 * context, the request is declined without asking anyone: an answer must
 * never go to the wrong run.
 *
 * While a question is open the call's own timeout is paused (a human is
 * slower than a tool); the question has its own timeout (the broker's), after
 * which the server is told `decline`.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../auth/principal.js";
import type { RunStart } from "../audit/chain.js";
import {
  checkRequestedSchema,
  defaultsOf,
  displayText,
  validateAnswer,
  type AnswerContent,
  type RequestedSchema,
} from "./schema.js";
import { checkElicitationUrl, URL_REFUSED } from "./url.js";

/** The call a question is asked in. */
export interface ElicitationCall {
  server: string;
  tool: string;
  threadId: string;
  principal: Principal;
  /** The ledger's ids of the call, when it runs in a recorded run. */
  record?: { call_id: string; run_id: string; run?: RunStart | undefined } | undefined;
  /** Where each question of the call is noted as it ends (its id and outcome, never the answer): the call's ledger row. */
  elicited?: ElicitationRecord[] | undefined;
}

/** One question of a call, as its ledger row records it. `id` is null for a question refused before anyone was asked. */
export interface ElicitationRecord {
  id: string | null;
  outcome: ElicitationOutcome;
}

/** What the owner is asked. */
export interface ElicitationQuestion {
  call: ElicitationCall;
  /** The server's message (shown as text, never as markup). */
  message: string;
  schema: RequestedSchema;
  /** The form's defaults (SEP-1034), shown prefilled. */
  defaults: AnswerContent;
  /** URL mode: the checked URL the owner may open, its host, and the server's id of the question. */
  url?: { url: string; host: string; serverId: string } | undefined;
}

/** How a question ended. `timeout` reaches the server as `decline`. */
export type ElicitationAnswer =
  | { action: "accept"; content: AnswerContent }
  | { action: "decline" }
  | { action: "cancel" }
  | { action: "timeout" };

export type ElicitationOutcome = ElicitationAnswer["action"] | "refused";

/** Asks the run's owner (the API server: a Postgres row, a stream event, a route). */
export interface ElicitationBroker {
  ask(question: ElicitationQuestion, signal: AbortSignal): Promise<ElicitationAnswer>;
  /** Records how a question ended (never the answer's content); returns the question's id when it was asked. */
  settled?(question: ElicitationQuestion, outcome: ElicitationOutcome, detail: string): Promise<string | undefined>;
  /** Records that the server said a URL-mode question it asked is complete (`notifications/elicitation/complete`). */
  completed?(question: ElicitationQuestion): Promise<void>;
}

/**
 * Answers one `elicitation/create` of `client`'s server; `complete` takes
 * the server's `notifications/elicitation/complete`.
 */
export type ElicitationHandler = ((client: object, params: unknown, signal: AbortSignal) => Promise<ElicitResult>) & {
  complete?: (params: { elicitationId: string }) => Promise<void>;
};

interface InFlightCall {
  call: ElicitationCall;
  signal: AbortSignal;
  pause(): void;
  resume(): void;
}

const callContext = new AsyncLocalStorage<InFlightCall>();
const inFlight = new WeakMap<object, Set<InFlightCall>>();

/** The host's MCP client, declaring form and URL elicitation when `elicit` answers it. */
export function createHostClient(elicit?: ElicitationHandler): Client {
  const info = { name: "warrant-host", version: "0.1.0" };
  if (!elicit) return new Client(info);
  const client = new Client(info, { capabilities: { elicitation: { form: {}, url: {} } } });
  client.setRequestHandler(ElicitRequestSchema, (request, extra) => elicit(client, request.params, extra.signal));
  client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) =>
    elicit.complete ? elicit.complete(notification.params) : Promise.resolve(),
  );
  return client;
}

/** The call an elicitation of `client` belongs to, or undefined when that is not certain. */
function callOf(client: object): InFlightCall | undefined {
  const calls = inFlight.get(client);
  const current = callContext.getStore();
  if (current && calls?.has(current)) return current;
  return calls?.size === 1 ? [...calls][0] : undefined;
}

/** The error a call's own timeout aborts it with (classified `tool_timeout`). */
function timeoutError(): Error {
  const error = new Error("the tool did not answer in time");
  error.name = "TimeoutError";
  return error;
}

/** The longest timer Node keeps (the SDK's own timeout is left at it; ours decides). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Runs one `tools/call` so that its server may elicit: registered as in
 * flight on `client`, its timeout paused while a question is open.
 */
export async function elicitableCall<T>(
  client: object,
  call: ElicitationCall,
  options: { timeout: number; signal?: AbortSignal },
  work: (options: { timeout: number; signal: AbortSignal }) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const outer = options.signal;
  const forward = () => controller.abort(outer?.reason);
  if (outer?.aborted) forward();
  outer?.addEventListener("abort", forward, { once: true });
  let remaining = options.timeout;
  let startedAt = Date.now();
  let paused = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => controller.abort(timeoutError()), Math.max(remaining, 0));
  };
  const entry: InFlightCall = {
    call,
    signal: controller.signal,
    pause() {
      paused += 1;
      if (paused > 1) return;
      clearTimeout(timer);
      remaining -= Date.now() - startedAt;
    },
    resume() {
      paused -= 1;
      if (paused > 0) return;
      startedAt = Date.now();
      arm();
    },
  };
  const calls = inFlight.get(client) ?? new Set<InFlightCall>();
  inFlight.set(client, calls);
  calls.add(entry);
  arm();
  try {
    return await callContext.run(entry, () => work({ timeout: MAX_TIMER_MS, signal: controller.signal }));
  } finally {
    clearTimeout(timer);
    calls.delete(entry);
    outer?.removeEventListener("abort", forward);
  }
}

const DECLINE: ElicitResult = { action: "decline" };

/** How many URL-mode questions of one server are remembered for their completion notification. */
const REMEMBERED_URLS = 200;

/** Builds the handler of one server's elicitations. `allowed`: the operator lets this server ask users. */
export function elicitationHandler(options: {
  server: string;
  allowed: boolean;
  broker: ElicitationBroker;
  log: (line: string) => void;
}): ElicitationHandler {
  const { server, broker, log } = options;
  /** URL-mode questions this handler asked, by the server's id: its completion notification finds its row. */
  const urlQuestions = new Map<string, ElicitationQuestion>();
  const handler: ElicitationHandler = async (client, params, signal) => {
    const entry = callOf(client);
    const request = params as {
      mode?: string;
      message?: unknown;
      requestedSchema?: RequestedSchema;
      url?: unknown;
      elicitationId?: unknown;
    };
    if (!entry) {
      log(`[warrant mcp] declined an elicitation of ${server}: it came with no single call in flight\n`);
      return DECLINE;
    }
    const refuse = async (detail: string): Promise<ElicitResult> => {
      log(`[warrant mcp] declined an elicitation of ${server}: ${detail}\n`);
      await broker.settled?.(blankQuestion(entry.call), "refused", detail).catch(() => undefined);
      entry.call.elicited?.push({ id: null, outcome: "refused" });
      return DECLINE;
    };
    if (!options.allowed) return refuse("the server is not configured to elicit (`elicitation: true`)");
    let question: ElicitationQuestion;
    if (request.mode === "url") {
      const checked = urlQuestionOf(entry.call, request);
      if (!checked.ok) {
        // A typed error, not a silent decline: the server learns why; the refusal is recorded like any other.
        await refuse(`${URL_REFUSED}: ${checked.reason}`);
        throw new McpError(ErrorCode.InvalidParams, `${URL_REFUSED}: ${checked.reason}`, {
          code: URL_REFUSED,
          reason: checked.reason,
        });
      }
      question = checked.question;
    } else {
      if (request.mode !== undefined && request.mode !== "form") return refuse("unknown elicitation mode");
      const schema = request.requestedSchema;
      if (!schema || typeof request.message !== "string") return refuse("the request has no form");
      const shape = checkRequestedSchema(schema);
      if (!shape.ok) return refuse(shape.reason);
      question = {
        call: entry.call,
        message: displayText(request.message, 2_000),
        schema,
        defaults: defaultsOf(schema),
      };
    }
    const stop = new AbortController();
    const abort = () => stop.abort();
    signal.addEventListener("abort", abort, { once: true });
    entry.signal.addEventListener("abort", abort, { once: true });
    entry.pause();
    let answer: ElicitationAnswer;
    try {
      answer = await broker.ask(question, stop.signal);
    } catch (error) {
      log(`[warrant mcp] elicitation of ${server} failed: ${error instanceof Error ? error.message : String(error)}\n`);
      answer = { action: "cancel" };
    } finally {
      entry.resume();
      signal.removeEventListener("abort", abort);
      entry.signal.removeEventListener("abort", abort);
    }
    const result = question.url ? toUrlResult(answer) : toResult(question.schema, answer);
    const outcome = answer.action === "accept" && result.action !== "accept" ? "refused" : answer.action;
    const detail = question.url ? `url host ${question.url.host}` : "";
    const id = await broker.settled?.(question, outcome, detail).catch(() => undefined);
    entry.call.elicited?.push({ id: id ?? null, outcome });
    if (question.url && outcome === "accept") {
      urlQuestions.set(question.url.serverId, question);
      if (urlQuestions.size > REMEMBERED_URLS) urlQuestions.delete(urlQuestions.keys().next().value ?? "");
    }
    return result;
  };
  handler.complete = async ({ elicitationId }) => {
    const question = urlQuestions.get(elicitationId);
    // A completion of a question this host never consented to (or forgot) changes nothing.
    if (!question) return;
    urlQuestions.delete(elicitationId);
    await broker.completed?.(question).catch((error: unknown) => {
      log(`[warrant mcp] completion of an elicitation of ${server} not recorded: ${String(error)}\n`);
    });
  };
  return handler;
}

/** True when `error` is the handler's refusal of a URL-mode request's URL (code `elicitation_url_refused`). */
export function isUrlRefusal(error: unknown): boolean {
  if (!(error instanceof McpError) || typeof error.data !== "object" || error.data === null) return false;
  return Reflect.get(error.data, "code") === URL_REFUSED;
}

const NO_FORM: RequestedSchema = { type: "object", properties: {} };

/** A URL-mode request as a question, or why it is refused. */
function urlQuestionOf(
  call: ElicitationCall,
  request: { message?: unknown; url?: unknown; elicitationId?: unknown },
): { ok: true; question: ElicitationQuestion } | { ok: false; reason: string } {
  const { elicitationId } = request;
  if (typeof request.message !== "string") return { ok: false, reason: "no message" };
  if (typeof elicitationId !== "string" || elicitationId === "" || elicitationId.length > 200)
    return { ok: false, reason: "no usable elicitationId" };
  const checked = checkElicitationUrl(request.url);
  if (!checked.ok) return checked;
  return {
    ok: true,
    question: {
      call,
      message: displayText(request.message, 2_000),
      schema: NO_FORM,
      defaults: {},
      url: { url: checked.url, host: checked.host, serverId: elicitationId },
    },
  };
}

/** The server's view of a URL-mode answer: consent carries no content; a timeout is a decline. */
function toUrlResult(answer: ElicitationAnswer): ElicitResult {
  if (answer.action === "accept") return { action: "accept" };
  return answer.action === "cancel" ? { action: "cancel" } : DECLINE;
}

/** The server's view of an answer: defaults filled in (SEP-1034), checked once more; a timeout is a decline. */
function toResult(schema: RequestedSchema, answer: ElicitationAnswer): ElicitResult {
  if (answer.action === "timeout") return DECLINE;
  if (answer.action !== "accept") return { action: answer.action };
  const checked = validateAnswer(schema, answer.content);
  return checked.ok ? { action: "accept", content: checked.content } : DECLINE;
}

function blankQuestion(call: ElicitationCall): ElicitationQuestion {
  return { call, message: "", schema: NO_FORM, defaults: {} };
}
