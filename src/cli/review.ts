/**
 * Reviews in the terminal: the approval card for a pending interrupt, the
 * `--resume` command line a script can run, and the approve / edit / reject
 * prompt for a person at a TTY. The prompt reads and writes through a
 * {@link ReviewIO}, so it is tested with scripted answers.
 */
import { createInterface } from "node:readline";
import { z } from "zod";
import type { ResumeDecision } from "../policy/resume.js";
import { describeAction, formatMoment } from "../wording/proposal.js";

/** The terminal's time zone (the same the page would use in this machine's browser). */
const VIEWER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** The interrupt value human_review raises (DESIGN §8), as far as the terminal needs it. */
const PendingReviewSchema = z.object({
  action_requests: z.array(
    z.object({ name: z.string(), args: z.record(z.string(), z.unknown()), description: z.string().optional() }),
  ),
  approvals: z.array(
    z.object({ action_id: z.string(), fingerprint: z.string(), version: z.number(), expires_at: z.string() }),
  ),
  review_configs: z
    .array(z.object({ action_name: z.string(), allowed_decisions: z.array(z.string()), rule: z.string().optional() }))
    .optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
export type PendingReview = z.infer<typeof PendingReviewSchema>;

/** The first interrupt value that is a review request; undefined when none is. */
export function pendingReviewOf(interrupts: readonly unknown[]): PendingReview | undefined {
  for (const value of interrupts) {
    const parsed = PendingReviewSchema.safeParse(value);
    if (parsed.success && parsed.data.action_requests.length === parsed.data.approvals.length) return parsed.data;
  }
  return undefined;
}

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.length > 0 ? value : undefined;

/**
 * One card per action, in people's words (src/wording/proposal.ts, as on the page): what will happen, its
 * arguments as a readable table, when the request expires, and the ids on a last `details` line.
 */
export function approvalCard(review: PendingReview, zone: string = VIEWER_ZONE): string {
  const lines = [`waiting for approval: ${review.action_requests.length} action(s)`];
  if (review.error) lines.push(`  the previous answer was refused: ${review.error.message}`);
  review.action_requests.forEach((action, index) => {
    const approval = review.approvals[index];
    const words = describeAction(action.name, action.args, zone);
    lines.push("", `  [${index + 1}] ${words.summary}`);
    const field = (label: string, value: string | undefined) => {
      if (value !== undefined) lines.push(`      ${label.padEnd(12)}${label.length >= 12 ? " " : ""}${value}`);
    };
    // A multi-line value (an event's contents) continues under its first line.
    for (const item of words.fields) field(item.label, item.value.split("\n").join("\n                  "));
    if (approval) field("Expires", `${formatMoment(approval.expires_at, zone)} (${zone})`);
    const rule = text(review.review_configs?.[index]?.rule);
    field(
      "Details",
      [`tool ${action.name}`, approval ? `action ${approval.action_id}` : undefined, rule ? `rule ${rule}` : undefined]
        .filter(Boolean)
        .join(" · "),
    );
  });
  return lines.join("\n");
}

/** Quotes one argument for a POSIX shell. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The exact command that approves every pending action, bound by action id. */
export function resumeCommand(user: string, threadId: string, review: PendingReview): string {
  const decisions = review.approvals.map((approval) => ({ type: "approve", action_id: approval.action_id }));
  return [
    "npm run chat --",
    "--user",
    shellQuote(user),
    "--thread",
    shellQuote(threadId),
    "--resume",
    shellQuote(JSON.stringify({ decisions })),
  ].join(" ");
}

/** Lines in, text out: a terminal, or a script in tests. `readLine` resolves undefined at end of input. */
export interface ReviewIO {
  write(text: string): void;
  readLine(): Promise<string | undefined>;
}

async function ask(io: ReviewIO, question: string): Promise<string | undefined> {
  io.write(question);
  const line = await io.readLine();
  return line === undefined ? undefined : line.trim();
}

/** Reads a JSON object of arguments, asking again until it parses as one; undefined at end of input. */
async function askArguments(
  io: ReviewIO,
  current: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  io.write(`  current arguments (to copy and change): ${JSON.stringify(current)}\n`);
  for (;;) {
    const answer = await ask(io, "  new arguments (one JSON object): ");
    if (answer === undefined) return undefined;
    try {
      const parsed: unknown = JSON.parse(answer);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
        return parsed as Record<string, unknown>;
      io.write("  that is JSON, but not an object; try again\n");
    } catch {
      io.write("  that is not valid JSON; try again\n");
    }
  }
}

/**
 * Asks approve / edit / reject for each action and returns the decisions,
 * bound by action id; undefined when input ends before every action is
 * decided (nothing is sent then).
 */
export async function reviewInteractively(
  review: PendingReview,
  io: ReviewIO,
): Promise<{ decisions: ResumeDecision[] } | undefined> {
  const decisions: ResumeDecision[] = [];
  for (const [index, action] of review.action_requests.entries()) {
    const actionId = review.approvals[index]?.action_id;
    for (;;) {
      const summary = describeAction(action.name, action.args, VIEWER_ZONE).summary;
      const answer = await ask(
        io,
        `[${index + 1}/${review.action_requests.length}] ${summary}: (a)pprove, (e)dit or (r)eject? `,
      );
      if (answer === undefined) return undefined;
      const choice = answer.toLowerCase();
      if (choice === "a" || choice === "approve") {
        decisions.push({ type: "approve", action_id: actionId });
        break;
      }
      if (choice === "e" || choice === "edit") {
        const args = await askArguments(io, action.args);
        if (args === undefined) return undefined;
        decisions.push({ type: "edit", action_id: actionId, edited_action: { name: action.name, args } });
        break;
      }
      if (choice === "r" || choice === "reject") {
        const message = await ask(io, "  reason (optional, Enter for none): ");
        if (message === undefined) return undefined;
        decisions.push({
          type: "reject",
          action_id: actionId,
          ...(message ? { message: message.slice(0, 2_000) } : {}),
        });
        break;
      }
      io.write("  answer a, e or r\n");
    }
  }
  return { decisions };
}

/** A ReviewIO on this process's stdin, writing prompts to stderr (stdout stays the run's output). */
export function terminalIO(): ReviewIO & { close(): void } {
  const lines = createInterface({ input: process.stdin, terminal: false });
  const iterator = lines[Symbol.asyncIterator]();
  return {
    write: (value) => void process.stderr.write(value),
    readLine: async () => {
      const next = await iterator.next();
      return next.done ? undefined : String(next.value);
    },
    close: () => lines.close(),
  };
}
