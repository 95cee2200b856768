/**
 * What `npm run chat` prints when a run ends or pauses, the same whether the
 * run executed in this process or on the running server: the formatted run
 * (or one JSON line with --json), and on Ctrl-C the thread and the command
 * that continues it.
 */
import type { State } from "../state.js";
import type { Options } from "./chat-options.js";
import { formatRun } from "./format.js";
import { pendingReviewOf, resumeCommand, shellQuote } from "./review.js";

/** The parts of a thread's state the CLI reads: the values and the pending interrupts. */
export interface Snapshot {
  values: unknown;
  next: readonly string[];
  tasks: readonly { interrupts: readonly { value?: unknown }[] }[];
}

export const interruptsOf = (snapshot: Snapshot): unknown[] =>
  snapshot.tasks.flatMap((task) => task.interrupts.map((item) => item.value));

/** The Warrant run a thread's state belongs to (what `npm run trace` takes), if it has started one. */
export const warrantRunOf = (snapshot: Snapshot): string | undefined => {
  const run = (snapshot.values as { run?: { run_id?: unknown } | null } | null)?.run;
  return typeof run?.run_id === "string" ? run.run_id : undefined;
};

export function printRun(
  options: Options,
  user: string,
  threadId: string,
  runId: string,
  replayed: boolean,
  snapshot: Snapshot,
): void {
  const interrupts = interruptsOf(snapshot);
  const review = pendingReviewOf(interrupts);
  const resume = review ? resumeCommand(user, threadId, review) : undefined;
  const state = snapshot.values as Partial<State>;
  if (options.json) {
    const { status, result, termination_reason, ledger, usage: spent } = state;
    console.log(
      JSON.stringify({
        thread_id: threadId,
        run_id: runId,
        replayed,
        status,
        result,
        termination_reason,
        ledger: ledger ?? [],
        usage: spent,
        interrupts,
        authorization_required: authorizationAsksOf(interrupts),
        ...(resume ? { resume_command: resume } : {}),
      }),
    );
  } else {
    const asks = authorizationAsksOf(interrupts);
    const reply = `${continueCommand(user, threadId)} "<your answer>"`;
    console.log(formatRun(state, { review, resume, reply, waiting: asks.length > 0 ? "authorization" : undefined }));
    if (asks.length > 0) console.log(connectLines(asks, continueCommand(user, threadId)));
  }
}

/** A server the run's owner must authorize Warrant for (the `authorization_required` pause). */
export interface AuthorizationAsk {
  server: string;
  authorization_url: string;
  expires_at: string;
}

export function authorizationAsksOf(interrupts: readonly unknown[]): AuthorizationAsk[] {
  return interrupts.flatMap((value) => {
    const asks = (value as { authorization_required?: unknown } | null)?.authorization_required;
    if (!Array.isArray(asks)) return [];
    return asks.filter(
      (ask): ask is AuthorizationAsk =>
        typeof ask?.server === "string" &&
        typeof ask?.authorization_url === "string" &&
        typeof ask?.expires_at === "string",
    );
  });
}

/** What the terminal prints for an authorization pause: where to go, and how the run goes on. */
export function connectLines(asks: readonly AuthorizationAsk[], resume: string): string {
  const lines = asks.map(
    (ask) => `Connect ${ask.server}: ${ask.authorization_url}\n  (the link expires ${ask.expires_at})`,
  );
  return [
    "waiting for authorization: Warrant needs your permission to use these servers on your behalf",
    ...lines,
    "open the link in the browser where you are signed in to the chat page; the server (npm start) receives",
    `the callback and resumes the run. Then see the result with: ${resume}`,
  ].join("\n");
}

/** The command that picks a thread up again: it continues a stopped run, or shows (and asks for) a pending review. */
export const continueCommand = (user: string, threadId: string): string =>
  `npm run chat -- --user ${shellQuote(user)} --thread ${shellQuote(threadId)}`;

/** Written on Ctrl-C once the thread is known. */
export const interruptedLines = (user: string, threadId: string): string =>
  `warrant: interrupted: thread ${threadId}\ncontinue with: ${continueCommand(user, threadId)}\n`;
