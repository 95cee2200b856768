/**
 * `npm run chat` while `npm start` of this checkout runs: the CLI is a client
 * of its API, with a token it mints for `--user` (the server's secret). The
 * run executes on the server, so its thread, status, inbox entry, run id
 * and trace are the API's; the terminal shows the same output as an
 * in-process run. A thread started with `--idempotency-key K` gets an id
 * derived from the user and K, so the same command again finds the same
 * thread and the API replays the run it started (`Idempotent-Replayed`).
 */
import { createHash, randomUUID } from "node:crypto";
import { loadApiSecret, mintApiToken } from "../auth/api-token.js";
import type { Principal } from "../auth/principal.js";
import type { Settings } from "../env.js";
import { withoutSecretShapes } from "../secrets/process-scanner.js";
import { interactive, type Options } from "./chat-options.js";
import { interruptsOf, printRun, warrantRunOf, type Snapshot } from "./chat-output.js";
import { approvalCard, pendingReviewOf, reviewInteractively, terminalIO, type ReviewIO } from "./review.js";
import { askElicitation, elicitationCard, type OpenElicitation } from "./elicitation.js";
import { setTimeout as sleep } from "node:timers/promises";
import { requestJson, ServerRefusal } from "./server-client.js";
import { CliError } from "../errors.js";

/** Where the run is, for the Ctrl-C handler: the thread, and how to stop the run that is going. */
export interface RemoteProgress {
  thread(threadId: string): void;
  running(cancel: (() => Promise<void>) | undefined): void;
}

interface RunJson {
  run_id: string;
  status: string;
  error?: { error?: unknown; message?: unknown };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ASSISTANT = "agent";

/** A UUID-shaped id from the owner and the key: one thread per keyed command, the same every time. */
export function keyedThreadId(principal: Principal, key: string): string {
  const hex = createHash("sha256")
    .update(`warrant-cli-thread\0${principal.tenant}\0${principal.user_id}\0${key}`)
    .digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Who a token is, as the running server verifies it (`GET /ui/session`); the grants stay on the server. */
export async function principalOfToken(url: string, token: string): Promise<Principal> {
  const { body } = await requestJson<{ principal: Omit<Principal, "grants"> }>(url, token, "GET", "/ui/session");
  return { ...body.principal, grants: {} };
}

export async function chatRemotely(
  url: string,
  options: Options,
  settings: Settings,
  principal: Principal,
  progress: RemoteProgress,
): Promise<number> {
  if (options.caseId !== undefined)
    throw new CliError(
      "unsupported",
      "--case runs in-process only; the running server takes the case from the request text (or stop the server)",
    );
  // A token given (an identity provider's) is used as it is; otherwise one is minted for --user.
  const token =
    options.token ??
    (await mintApiToken(
      await loadApiSecret({ configured: settings.server.authSecret, dataDir: settings.dataDir }),
      principal,
    ));
  const api = <T>(method: "GET" | "POST", path: string, extra: Parameters<typeof requestJson>[4] = {}) =>
    requestJson<T>(url, token, method, path, extra);
  const user = principal.user_id;

  const threadId = await openThread(api, principal, options);
  progress.thread(threadId);
  const state = async () => (await api<Snapshot>("GET", `/threads/${threadId}/state`)).body;

  let body: Record<string, unknown>;
  if (options.resume !== undefined)
    body = { assistant_id: ASSISTANT, command: { resume: withoutSecretShapes(options.resume) } };
  else if (options.request)
    body = { assistant_id: ASSISTANT, input: { messages: [{ role: "user", content: options.request }] } };
  else {
    const current = await state();
    if (interruptsOf(current).length > 0 || current.next.length === 0) {
      // Nothing to start: a pending review is shown (and asked at a terminal), a finished thread printed.
      if (interruptsOf(current).length === 0) console.error(`warrant: thread ${threadId} has nothing left to run`);
      process.stderr.write(`thread: ${threadId}\n`);
      if (interactive(options)) await reviewLoop(api, threadId, progress);
      printRun(options, user, threadId, warrantRunOf(await state()) ?? "", false, await state());
      return 0;
    }
    body = { assistant_id: ASSISTANT, input: null };
  }
  const started = await api<RunJson>("POST", `/threads/${threadId}/runs`, {
    body,
    ...(options.key !== undefined ? { headers: { "idempotency-key": options.key } } : {}),
  });
  const runId = started.body.run_id;
  if (started.headers.get("idempotent-replayed") === "true") {
    process.stderr.write(
      `thread: ${threadId}  run: ${runId}  (replayed: --idempotency-key was used for this command; nothing new started)\n`,
    );
    printRun(options, user, threadId, runId, true, await state());
    return 0;
  }
  process.stderr.write(`thread: ${threadId}  run: ${runId}\n`);
  await joinAnswering(api, progress, threadId, runId, interactive(options));
  if (interactive(options)) await reviewLoop(api, threadId, progress);
  printRun(options, user, threadId, runId, false, await state());
  return 0;
}

type Api = <T>(
  method: "GET" | "POST",
  path: string,
  extra?: Parameters<typeof requestJson>[4],
) => Promise<{
  status: number;
  body: T;
  headers: Headers;
}>;

/** The thread to run on: the caller's own (`--thread`; anything else is thread_not_found), or a new one. */
async function openThread(api: Api, principal: Principal, options: Options): Promise<string> {
  if (options.thread !== undefined) {
    const id = options.thread.toLowerCase();
    const found = UUID.test(id) ? await api<unknown>("GET", `/threads/${id}`, { accept: [404] }) : undefined;
    if (!found || found.status === 404)
      throw new CliError("thread_not_found", `thread ${options.thread} not found for ${principal.user_id}`);
    return id;
  }
  const id = options.key !== undefined ? keyedThreadId(principal, options.key) : randomUUID();
  await api("POST", "/threads", { body: { thread_id: id, if_exists: "do_nothing", graph_id: ASSISTANT } });
  return id;
}

/** Waits for the run to end; a run that failed is reported as the API recorded it. */
async function join(api: Api, progress: RemoteProgress, threadId: string, runId: string): Promise<void> {
  progress.running(async () => {
    await api("POST", `/threads/${threadId}/runs/${runId}/cancel`, { accept: [404, 409] });
  });
  try {
    await api("GET", `/threads/${threadId}/runs/${runId}/join`);
  } finally {
    progress.running(undefined);
  }
  const run = (await api<RunJson>("GET", `/threads/${threadId}/runs/${runId}`)).body;
  if (run.status === "error" || run.status === "timeout") {
    const code = typeof run.error?.error === "string" ? run.error.error : "run_failed";
    const message = typeof run.error?.message === "string" ? run.error.message : `run ${runId} ended ${run.status}`;
    throw new ServerRefusal(code, message, 500);
  }
}

/** Joins the run while showing (and at a terminal, asking) each question a server asks the owner (elicitation). */
async function joinAnswering(
  api: Api,
  progress: RemoteProgress,
  threadId: string,
  runId: string,
  atTerminal: boolean,
): Promise<void> {
  const stop = new AbortController();
  const watching = watchElicitations(api, threadId, atTerminal, stop.signal);
  try {
    await join(api, progress, threadId, runId);
  } finally {
    stop.abort();
    await watching;
  }
}

/** Polls the thread's open questions while `signal` is not aborted; each is shown once and, at a terminal, asked. */
async function watchElicitations(api: Api, threadId: string, atTerminal: boolean, signal: AbortSignal) {
  const seen = new Set<string>();
  // Opened at the first question only: a reader on stdin would take lines meant for a later review.
  let io: (ReviewIO & { close(): void }) | undefined;
  try {
    while (!signal.aborted) {
      const open = await api<{ elicitations: OpenElicitation[] }>("GET", `/threads/${threadId}/elicitations`, {
        accept: [404],
      }).catch(() => undefined);
      for (const question of open?.status === 200 ? open.body.elicitations : []) {
        if (seen.has(question.elicitation_id) || signal.aborted) continue;
        seen.add(question.elicitation_id);
        process.stderr.write(`${elicitationCard(question)}\n`);
        if (!atTerminal) continue;
        io ??= terminalIO();
        await answerAtTerminal(api, question, io);
      }
      await sleep(500, undefined, { signal }).catch(() => undefined);
    }
  } finally {
    io?.close();
  }
}

async function answerAtTerminal(api: Api, question: OpenElicitation, io: ReviewIO): Promise<void> {
  for (;;) {
    const reply = await askElicitation(question, io);
    if (!reply) return;
    const sent = await api<{ error?: string; problems?: { field: string; problem: string }[] }>(
      "POST",
      `/threads/${question.thread_id}/elicitations/${question.elicitation_id}`,
      { body: reply, accept: [403, 409, 422] },
    );
    if (sent.status === 200) return;
    const problems = (sent.body.problems ?? []).map((item) => `${item.field}: ${item.problem}`).join(", ");
    io.write(`  refused (${sent.body.error ?? sent.status})${problems ? `: ${problems}` : ""}\n`);
    if (sent.status !== 422) return;
  }
}

/** At a terminal: show each pending review, ask per action, resume on the server, until none is pending. */
async function reviewLoop(api: Api, threadId: string, progress: RemoteProgress): Promise<void> {
  const io = terminalIO();
  try {
    for (;;) {
      const review = pendingReviewOf(interruptsOf((await api<Snapshot>("GET", `/threads/${threadId}/state`)).body));
      if (!review) return;
      io.write(`${approvalCard(review)}\n\n`);
      const answer = await reviewInteractively(review, io);
      if (!answer) return;
      const resumed = await api<RunJson>("POST", `/threads/${threadId}/runs`, {
        body: { assistant_id: ASSISTANT, command: { resume: withoutSecretShapes(answer) } },
      });
      await joinAnswering(api, progress, threadId, resumed.body.run_id, true);
    }
  } finally {
    io.close();
  }
}
