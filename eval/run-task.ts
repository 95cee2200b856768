/**
 * Runs one task once on one compiled graph and gathers what it left behind:
 * the final state (outcome, answer, citations, evidence, usage), the calls
 * that reached a server (boundary recorder), the thread's ledger rows and
 * denial events from Postgres, and the events it added to the calendar store.
 * A pause for review is answered as the task says (approve / reject), or
 * left pending.
 */
import { randomUUID } from "node:crypto";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import type { Principal } from "../src/auth/principal.js";
import type { Budgets } from "../src/env.js";
import type { InterruptPayload } from "../src/policy/resume.js";
import type { ApprovalStore, LedgerStore } from "../src/ports.js";
import { runConfigFor } from "../src/run-config.js";
import { runOptions } from "../src/graph/routes.js";
import type { AuditStore } from "../src/audit/events.js";
import type { State } from "../src/state.js";
import type { RecordingToolHost } from "./boundary.js";
import type { CalendarReader } from "./calendar-reader.js";
import type { ObservedDenial, RunObservation } from "./record.js";
import { resourcesOf } from "./score.js";
import type { Outcome, Task } from "./task.js";

/** The parts of a compiled graph the harness uses. */
export interface RunnableGraph {
  invoke(input: unknown, config: Record<string, unknown>): Promise<unknown>;
  getState(config: {
    configurable: Record<string, unknown>;
  }): Promise<{ values: unknown; tasks: readonly { interrupts: readonly { value?: unknown }[] }[] }>;
}

export interface RunContext {
  graph: RunnableGraph;
  tools: RecordingToolHost;
  ledger: LedgerStore;
  audit: AuditStore;
  approvals: ApprovalStore;
  calendar: CalendarReader;
  budgets: Budgets;
  principal: Principal;
  runBound: Record<string, string>;
}

/** Review rounds answered before the harness gives up on a run that keeps asking. */
const MAX_REVIEW_ROUNDS = 3;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The outcome the scorer sees: a pending review, an answer, a refusal, or a stop. */
export function outcomeOf(state: Pick<State, "status" | "result">, pendingReview: boolean): Outcome {
  if (pendingReview) return "waiting_approval";
  if (state.status === "needs_human") return "needs_human";
  if (state.status === "abstained" || state.result?.abstained === true) return "abstained";
  if (state.status === "completed" && state.result) return "answered";
  return "stopped";
}

/** Resources named by each proposed call, by call id (from the AI turns of the transcript). */
function proposedResources(messages: State["messages"]): Map<string, string[]> {
  const byCall = new Map<string, string[]>();
  for (const message of messages) {
    if (!AIMessage.isInstance(message)) continue;
    for (const call of message.tool_calls ?? [])
      if (call.id) byCall.set(call.id, resourcesOf(isRecord(call.args) ? call.args : {}));
  }
  return byCall;
}

/** Runs `task` on a fresh thread and observes it. */
export async function runTask(task: Task, context: RunContext): Promise<RunObservation> {
  const threadId = randomUUID();
  const config = {
    ...runConfigFor({ threadId, principal: context.principal, runBound: context.runBound }),
    ...runOptions(context.budgets),
  };
  const before = await context.calendar.eventIds(task.user);
  const started = performance.now();
  await context.graph.invoke({ messages: [new HumanMessage(task.request)] }, config);
  let pending = await pendingReview(context.graph, threadId);
  const review = task.review ?? "approve";
  const reviewer = reviewerFor(task);
  for (let round = 0; pending && review !== "leave_pending" && round < MAX_REVIEW_ROUNDS; round += 1) {
    await context.graph.invoke(new Command({ resume: { decisions: reviewer(pending) } }), config);
    pending = await pendingReview(context.graph, threadId);
  }
  const elapsed = performance.now() - started;
  const state = (await context.graph.getState({ configurable: { thread_id: threadId } })).values as State;
  return observe(threadId, state, pending !== undefined, elapsed, context, before);
}

/** Minutes between an action's `start` and `end` arguments, when it has both. */
function minutesOf(args: Record<string, unknown>): number | undefined {
  const start = typeof args["start"] === "string" ? Date.parse(args["start"]) : Number.NaN;
  const end = typeof args["end"] === "string" ? Date.parse(args["end"]) : Number.NaN;
  return Number.isFinite(start) && Number.isFinite(end) ? Math.round((end - start) / 60_000) : undefined;
}

/**
 * The harness's reviewer for a task: with `approve`, it approves the
 * calendar writes the task asked for (one per expected session, matched by
 * duration) and rejects any other write, as a careful person would; with
 * `reject`, it rejects everything.
 */
export function reviewerFor(
  task: Task,
): (pending: InterruptPayload) => Array<{ type: "approve" | "reject"; action_id: string; message?: string }> {
  const remaining = [...(task.expect.calendar_minutes ?? [])];
  return (pending) =>
    pending.approvals.map((approval, index) => {
      const action = pending.action_requests[index];
      const minutes = action ? minutesOf(action.args) : undefined;
      const wanted = minutes === undefined ? -1 : remaining.indexOf(minutes);
      if (task.review !== "reject" && wanted >= 0) {
        remaining.splice(wanted, 1);
        return { type: "approve" as const, action_id: approval.action_id };
      }
      return { type: "reject" as const, action_id: approval.action_id, message: "not what was asked for" };
    });
}

async function pendingReview(graph: RunnableGraph, threadId: string): Promise<InterruptPayload | undefined> {
  const snapshot = await graph.getState({ configurable: { thread_id: threadId } });
  const value = snapshot.tasks
    .flatMap((item) => item.interrupts.map((interrupt) => interrupt.value))
    .find((item) => isRecord(item) && Array.isArray(item["approvals"]));
  return value as InterruptPayload | undefined;
}

async function observe(
  threadId: string,
  state: State,
  paused: boolean,
  elapsedMs: number,
  context: RunContext,
  before: ReadonlySet<string>,
): Promise<RunObservation> {
  const evidence = (state.evidence ?? []).map((item) => ({ ref: item.ref, item_id: item.item_id }));
  const byRef = new Map(evidence.map((item) => [item.ref, item.item_id]));
  const resources = proposedResources(state.messages ?? []);
  const [ledger, audit, approvals, events] = await Promise.all([
    context.ledger.list(threadId),
    context.audit.list(threadId),
    context.approvals.list(threadId),
    context.calendar.events(context.principal.user_id),
  ]);
  const denied: ObservedDenial[] = [
    ...audit
      .filter((event) => event.kind === "denied")
      .map((event) => ({
        tool: event.tool,
        code: event.code,
        check: event.detail.split(/[ :(]/, 1)[0] ?? "",
        resources: resources.get(event.subject) ?? [],
      })),
    // A write the reviewer refused is a proposal the pipeline stopped too.
    ...approvals
      .filter((approval) => approval.outcome === "reject")
      .map((approval) => ({
        tool: approval.tool,
        code: "approval_rejected",
        check: "review",
        resources: resources.get(approval.call_id) ?? [],
      })),
  ];
  const usage = state.usage ?? { model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0 };
  return {
    outcome: outcomeOf(state, paused),
    status: state.status,
    termination_reason: state.termination_reason?.code ?? null,
    answer: state.result?.answer ?? null,
    citations: (state.result?.citations ?? []).map((citation) => ({
      ref: citation.ref,
      item_id: byRef.get(citation.ref) ?? null,
    })),
    evidence,
    boundary: context.tools.take(threadId),
    ledger: ledger.map((row) => ({
      tool: row.tool,
      status: row.status,
      error_code: row.error_code,
      attempt: row.attempt,
    })),
    denied,
    calendar_events: events
      .filter((event) => !before.has(event.event_id))
      .map(({ title, minutes }) => ({ title, minutes })),
    usage: {
      model_calls: usage.model_calls,
      tool_calls: usage.tool_calls,
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
    },
    elapsed_ms: Math.round(elapsedMs),
  };
}
