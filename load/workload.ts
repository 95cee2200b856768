/**
 * One load thread, as a client would drive it with `@langchain/langgraph-sdk`:
 * create a thread, stream a run (values, updates, messages-tuple), back off
 * on 429 for the `Retry-After` the server sent, then read the run, the
 * thread's state and the principal's thread list. Every response the client
 * receives, streams included, is checked for other principals' data
 * (visibility.ts) and counted by status and error code.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "@langchain/langgraph-sdk";
import { leaksIn, type Forbidden, type Leak, type Ownership } from "./visibility.js";

/** A principal of the load and the request its threads send. */
export interface LoadPrincipal {
  user: string;
  tenant: string;
  token: string;
  request: string;
  forbidden: Forbidden;
}

/** What all threads of one load share. */
export interface LoadLedger {
  ownership: Ownership;
  leaks: Leak[];
  /** Every non-2xx answer, by `<status> <error code>`. */
  errors: Map<string, number>;
  /** Answers with a 5xx status. */
  serverErrors: number;
  /** Body checks still reading (streams are read to their end). */
  pending: Promise<void>[];
}

export interface ThreadOutcome {
  user: string;
  instance: string;
  /** The run reached a final status (`success`, `error`, …), not `pending`/`running`. */
  ended: boolean;
  runStatus: string | undefined;
  /** The agent's own status at the end (`completed`, `abstained`, …). */
  agentStatus: string | undefined;
  /** 429s this thread backed off from. */
  backoffs: number;
  /** From creating the thread to the end of its run, backoffs included. */
  threadMs: number;
  /** From the admitted request to the end of its stream. */
  runMs: number | undefined;
  failure?: string;
}

const STREAM_MODES = ["values", "updates", "messages-tuple"] as const;
const TERMINAL = new Set(["success", "error", "interrupted", "timeout"]);
/** A bound on 429 retries per thread, beside the load's deadline. */
const MAX_ATTEMPTS = 1_000;

/** An SDK client whose every response is checked and counted; `retryAfter()` is the last 429's advice in seconds. */
function observedClient(
  url: string,
  principal: LoadPrincipal,
  ledger: LoadLedger,
): { client: Client; retryAfter: () => number } {
  let retryAfter = 1;
  const observe = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    const target = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const where = `${init?.method ?? "GET"} ${new URL(target).pathname}`;
    if (response.status >= 500) ledger.serverErrors += 1;
    if (response.status === 429) retryAfter = Number(response.headers.get("retry-after") ?? "1") || 1;
    const copy = response.clone();
    ledger.pending.push(
      copy.text().then(
        (body) => {
          if (!response.ok) {
            const key = `${response.status} ${errorCode(body)}`;
            ledger.errors.set(key, (ledger.errors.get(key) ?? 0) + 1);
          }
          ledger.leaks.push(...leaksIn(body, principal.user, principal.forbidden, ledger.ownership, where));
        },
        () => undefined, // the stream was cut; the SDK side reports it
      ),
    );
    return response;
  };
  const client = new Client({
    apiUrl: url,
    defaultHeaders: { Authorization: `Bearer ${principal.token}` },
    // No retries inside the SDK: this loop sees every answer and backs off itself.
    callerOptions: { maxRetries: 0, fetch: observe },
  });
  return { client, retryAfter: () => retryAfter };
}

function errorCode(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown };
    return typeof parsed.error === "string" ? parsed.error : "unknown";
  } catch {
    return "unparsed";
  }
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === "number" ? status : undefined;
}

/** Drives one thread to the end of its run (or the deadline). Never throws. */
export async function driveThread(
  url: string,
  principal: LoadPrincipal,
  ledger: LoadLedger,
  deadline: number,
): Promise<ThreadOutcome> {
  const began = performance.now();
  const outcome: ThreadOutcome = {
    user: principal.user,
    instance: url,
    ended: false,
    runStatus: undefined,
    agentStatus: undefined,
    backoffs: 0,
    threadMs: 0,
    runMs: undefined,
  };
  const { client, retryAfter } = observedClient(url, principal, ledger);
  try {
    const thread = await client.threads.create();
    ledger.ownership.record(thread.thread_id, principal.user);
    let runId: string | undefined;
    for (let attempt = 0; runId === undefined; attempt += 1) {
      if (Date.now() > deadline || attempt >= MAX_ATTEMPTS) throw new Error("deadline: the run was never admitted");
      const admittedAt = performance.now();
      try {
        for await (const part of client.runs.stream(thread.thread_id, "agent", {
          input: { messages: [{ role: "user", content: principal.request }] },
          streamMode: [...STREAM_MODES],
        })) {
          if (part.event === "metadata") {
            runId = String((part.data as { run_id?: unknown }).run_id);
            ledger.ownership.record(runId, principal.user);
          } else if (part.event === "values") {
            const status = (part.data as { status?: unknown }).status;
            if (typeof status === "string") outcome.agentStatus = status;
          }
        }
        outcome.runMs = performance.now() - admittedAt;
      } catch (error) {
        if (statusOf(error) !== 429) throw error;
        outcome.backoffs += 1;
        // Retry-After, with jitter so the refused requests do not return in lockstep.
        await sleep(retryAfter() * 1000 * (0.5 + Math.random()));
      }
    }
    const run = await client.runs.get(thread.thread_id, runId);
    outcome.runStatus = run.status;
    outcome.ended = TERMINAL.has(run.status);
    // Read back what a client reads after a run; the observer checks both answers.
    await client.threads.getState(thread.thread_id);
    await client.threads.search({ limit: 20 });
  } catch (error) {
    outcome.failure = `${statusOf(error) ?? ""} ${error instanceof Error ? error.message : String(error)}`
      .trim()
      .slice(0, 300);
  }
  outcome.threadMs = performance.now() - began;
  return outcome;
}
