/**
 * The review inbox: pending reviews the caller may decide, across the users
 * of the caller's tenant for a reviewer (`approvals:decide`), the caller's own
 * for anyone else, and deciding one of them through the API.
 *
 *   GET  /reviews                 → { reviews: [...] }
 *   GET  /reviews/{thread_id}     → one review, 404 when the caller may not decide it
 *   POST /reviews/{thread_id}     body: the resume value {"decisions": [...]}
 *                                 → the resume run, waited for, where it left the thread, and
 *                                   per action what came of it (`actions`, from the ledger)
 *
 * Under a policy language engine (Cedar), its `approve` policies decide too:
 * the inbox leaves out what they refuse the caller, and the POST answers
 * `approver_not_permitted` (403) naming the policies that refused.
 *
 * A review past its `expires_at` is listed with `expired: true` and cannot be
 * decided: the POST answers `review_expired` (409) before anything runs, since
 * every answer to it would be refused as `approval_expired` by the graph.
 *
 * A thread of another tenant, or one whose review the caller may not decide
 * (a student and another student's thread, an owner and a four-eyes action),
 * looks like no thread at all (404). The decision runs as a resume of the
 * owner's thread: the approver is the caller (recorded in the approval row),
 * every effect acts for the owner (the graph reads the owner from the run).
 */
import type { Context, Hono } from "hono";
import type { Principal } from "../../auth/principal.js";
import type { ThreadRow } from "../../stores/thread-rows.js";
import { mayDecide, REVIEWER_SCOPE } from "../../policy/approval.js";
import { ResumeSchema, type InterruptPayload } from "../../policy/resume.js";
import { notFound } from "../api-error.js";
import { assertReviewOpen, isPast, reviewDeadline } from "../review-expiry.js";
import { reviewedActions } from "../review-outcome.js";
import type { Env, RouteContext } from "../context.js";
import { pendingInterrupts } from "../runs/outcome.js";
import { assertSafeResume } from "../requests.js";
import { ApiError } from "../../errors.js";

/** Most reviews listed at once. */
const INBOX_LIMIT = 100;

interface InboxEntry {
  thread_id: string;
  owner: string;
  tenant: string;
  /** The Warrant run waiting for the decision. */
  run_id: string | null;
  request: string | null;
  interrupt_id: string | null;
  /** The interrupt value: `action_requests`, `review_configs`, `approvals` (see the README's approval section). */
  review: InterruptPayload;
  /** Whether the review is past its deadline (the earliest `expires_at` of its actions); it cannot be decided then. */
  expired: boolean;
  /** The earliest `expires_at` of its actions. */
  expires_at: string | null;
}

function isPayload(value: unknown): value is InterruptPayload {
  return (
    typeof value === "object" &&
    value !== null &&
    Array.isArray((value as InterruptPayload).action_requests) &&
    Array.isArray((value as InterruptPayload).review_configs)
  );
}

export function registerReviewRoutes(app: Hono<Env>, context: RouteContext): void {
  const { store, manager, principalOf, threadParam, snapshotOf, body } = context;

  /** The pending review of a thread, when the caller may decide every action in it. */
  const reviewOf = async (caller: Principal, thread: ThreadRow): Promise<InboxEntry | undefined> => {
    if (thread.tenant !== caller.tenant) return undefined;
    const isReviewer = caller.scopes.includes(REVIEWER_SCOPE);
    if (!isReviewer && thread.owner !== caller.user_id) return undefined;
    const snapshot = await snapshotOf(thread.thread_id);
    const pending = pendingInterrupts(snapshot).find((entry) => isPayload(entry.value));
    if (!pending || !isPayload(pending.value)) return undefined;
    const owner = { user_id: thread.owner, tenant: thread.tenant };
    if (!pending.value.review_configs.every((config) => mayDecide(caller, owner, config.rule ?? "owner_or_reviewer")))
      return undefined;
    const run = (snapshot.values as { run?: { run_id?: unknown; request?: unknown } | null }).run;
    const deadline = reviewDeadline(pending.value);
    return {
      thread_id: thread.thread_id,
      owner: thread.owner,
      tenant: thread.tenant,
      run_id: typeof run?.run_id === "string" ? run.run_id : null,
      request: typeof run?.request === "string" ? run.request : null,
      interrupt_id: pending.id ?? null,
      review: pending.value,
      expired: isPast(deadline),
      expires_at: deadline,
    };
  };

  /** What the policies (the `approve` action, under Cedar) say about the caller answering this review; null: go on. */
  const policyRefusal = async (caller: Principal, values: unknown, review: InterruptPayload) => {
    const recorded = (values as { run?: { principal?: Principal } | null }).run?.principal;
    if (!context.approverRefusal || !recorded) return null;
    const reviews = review.review_configs.map((config, index) => ({
      tool: config.action_name,
      rule: config.rule ?? "owner_or_reviewer",
      approval: { action_id: review.approvals[index]?.action_id ?? "" },
    }));
    return context.approverRefusal(caller, recorded, reviews);
  };

  const decidable = async (c: Context<Env>): Promise<{ thread: ThreadRow; entry: InboxEntry }> => {
    const caller = principalOf(c);
    const thread = await store.getInTenant(caller.tenant, threadParam(c));
    const entry = thread ? await reviewOf(caller, thread) : undefined;
    if (!thread || !entry) throw notFound("review");
    return { thread, entry };
  };

  app.get("/reviews", async (c) => {
    const caller = principalOf(c);
    const isReviewer = caller.scopes.includes(REVIEWER_SCOPE);
    const threads = await store.interruptedThreads(caller.tenant, {
      owner: isReviewer ? undefined : caller.user_id,
      limit: INBOX_LIMIT,
    });
    const reviews: InboxEntry[] = [];
    for (const thread of threads) {
      const entry = await reviewOf(caller, thread);
      if (!entry) continue;
      // The inbox lists what the caller may decide: under Cedar, what the `approve` policies let them.
      if (context.approverRefusal) {
        const values = (await snapshotOf(thread.thread_id)).values;
        if (await policyRefusal(caller, values, entry.review)) continue;
      }
      reviews.push(entry);
    }
    return c.json({ reviews });
  });

  app.get("/reviews/:thread_id", async (c) => c.json((await decidable(c)).entry));

  app.post("/reviews/:thread_id", async (c) => {
    const raw = await body(c);
    assertSafeResume(raw);
    const parsed = ResumeSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ApiError("invalid_request", `${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
    }
    const { thread, entry } = await decidable(c);
    assertReviewOpen(entry.review, entry.owner);
    const before = (await snapshotOf(thread.thread_id)).values;
    const refusal = await policyRefusal(principalOf(c), before, entry.review);
    if (refusal) throw new ApiError("approver_not_permitted", refusal.message);
    const assistantId = thread.graph_id ?? "agent";
    const active = await manager.start({
      principal: principalOf(c),
      thread,
      assistantId,
      input: null,
      resume: { value: parsed.data },
      streamModes: ["values"],
      metadata: {},
      // Under the lease: the review must still be pending (another reviewer may have answered it).
      verify: async () => {
        if (pendingInterrupts(await snapshotOf(thread.thread_id)).length === 0)
          throw new ApiError("no_pending_interrupt", "the review was already answered");
        assertReviewOpen(entry.review, entry.owner);
      },
    });
    const owner = { tenant: thread.tenant, user_id: thread.owner };
    const ended = await manager.wait(owner, thread.thread_id, active.run.run_id);
    const snapshot = await snapshotOf(thread.thread_id);
    const values = snapshot.values as { status?: unknown; termination_reason?: unknown; result?: unknown };
    return c.json({
      run_id: active.run.run_id,
      thread_id: thread.thread_id,
      run_status: ended?.status ?? "unknown",
      // Why a failed run failed (e.g. `principal_revoked`: the owner left the directory while the review waited).
      error: ended?.error ?? null,
      status: values.status ?? null,
      termination_reason: values.termination_reason ?? null,
      result: values.result ?? null,
      actions: reviewedActions(before, snapshot.values, parsed.data.decisions),
      pending: pendingInterrupts(snapshot).map((entry) => entry.value),
    });
  });
}
