/**
 * The API server's elicitation broker: a server's question during a call
 * becomes a row in Postgres and a `custom` event `{type: "elicitation"}` on
 * the run's stream; the owner answers through
 * `POST /threads/{thread_id}/elicitations/{elicitation_id}` on any instance
 * (src/server/routes/elicitations.ts), which settles the row; this instance
 * (the one holding the call) polls the row while the question is open and
 * takes the answer. No answer before the deadline → `timeout` (the server is
 * told `decline`). A thread with no run streaming in this process (a CLI run
 * with no one to ask) is declined at once.
 *
 * A URL-mode question (the owner consents to open a URL the server names)
 * goes the same way with no form; the server's later completion notification
 * stamps the row and pushes `{type: "elicitation_completed"}`.
 *
 * Each question ends in an `elicited` audit event of the run (chained): the
 * call, the server, the outcome, who answered. Never the content.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ElicitationBroker, ElicitationOutcome, ElicitationQuestion } from "./client.js";
import type { AnswerContent, RequestedSchema } from "./schema.js";
import type { AuditStore } from "../audit/events.js";
import { pushToRun } from "./streams.js";

/** The audit kind of a settled question. */
export const ELICITED = "elicited" as const;

/** How often the instance holding the call looks for the answer (only while a question is open). */
const POLL_MS = 200;

/** The stream event a question is (a LangGraph `custom` event, so `useStream`'s `onCustomEvent` gets it). */
export interface ElicitationEvent {
  type: "elicitation";
  elicitation_id: string;
  thread_id: string;
  call_id: string;
  server: string;
  tool: string;
  message: string;
  requested_schema: ElicitationQuestion["schema"];
  /** `url`: the owner is asked to consent to open `url` (on `host`), not to fill a form. */
  mode: "form" | "url";
  url?: string | undefined;
  host?: string | undefined;
  /** The form's defaults (SEP-1034): prefilled, and sent for any field the answer leaves out. */
  defaults: AnswerContent;
  expires_at: string;
}

/**
 * What the broker needs of the elicitations table: the port that
 * src/stores/elicitation-store.ts implements, so this folder does not
 * import the store (the store imports the form's types from here).
 */
export interface ElicitationRecords {
  open(row: {
    elicitation_id: string;
    thread_id: string;
    run_id: string;
    call_id: string;
    server: string;
    tool: string;
    owner: string;
    tenant: string;
    message: string;
    requested_schema: RequestedSchema;
    mode: "form" | "url";
    url: string | null;
    expires_at: string;
  }): Promise<void>;
  get(elicitationId: string): Promise<{ answered_by: string | null } | undefined>;
  /** Settles a pending row without an answer; false when it was no longer pending. */
  close(elicitationId: string, status: "timeout" | "cancel"): Promise<boolean>;
  /** The answer of a settled row, taken once; undefined while pending. */
  take(elicitationId: string): Promise<{ status: string; content: AnswerContent | null } | undefined>;
  /** Notes that the server said a URL-mode question is complete; false when it was not an accepted one. */
  complete(elicitationId: string): Promise<boolean>;
}

export interface ElicitationBrokerOptions {
  store: ElicitationRecords;
  timeoutMs: number;
  audit?: AuditStore | undefined;
  /** Pushes on the thread's run stream; false when no run of the thread streams here. Default: the process registry. */
  push?: (threadId: string, event: string, data: unknown) => boolean;
  log?: (line: string) => void;
  now?: () => number;
}

export function createElicitationBroker(options: ElicitationBrokerOptions): ElicitationBroker {
  const { store, timeoutMs } = options;
  const push = options.push ?? pushToRun;
  const now = options.now ?? Date.now;
  /** Who answered each question this instance asked (for the audit event). */
  const answeredBy = new Map<ElicitationQuestion, { id: string; by: string | null }>();
  /** The ids of settled URL-mode questions, until the server says they are complete (weak: forgotten with them). */
  const askedIds = new WeakMap<ElicitationQuestion, { id: string }>();

  return {
    async ask(question, signal) {
      const { call } = question;
      const elicitationId = randomUUID();
      const expiresAt = new Date(now() + timeoutMs).toISOString();
      const event: ElicitationEvent = {
        type: "elicitation",
        elicitation_id: elicitationId,
        thread_id: call.threadId,
        call_id: call.record?.call_id ?? "",
        server: call.server,
        tool: call.tool,
        message: question.message,
        requested_schema: question.schema,
        mode: question.url ? "url" : "form",
        ...(question.url ? { url: question.url.url, host: question.url.host } : {}),
        defaults: question.defaults,
        expires_at: expiresAt,
      };
      await store.open({
        elicitation_id: elicitationId,
        thread_id: call.threadId,
        run_id: call.record?.run_id ?? "",
        call_id: event.call_id,
        server: call.server,
        tool: call.tool,
        owner: call.principal.user_id,
        tenant: call.principal.tenant,
        message: question.message,
        requested_schema: question.schema,
        mode: event.mode,
        url: question.url?.url ?? null,
        expires_at: expiresAt,
      });
      answeredBy.set(question, { id: elicitationId, by: null });
      if (!push(call.threadId, "custom", event)) {
        await store.close(elicitationId, "cancel");
        await store.take(elicitationId);
        return { action: "decline" };
      }
      const closed = (outcome: string) =>
        push(call.threadId, "custom", { type: "elicitation_closed", elicitation_id: elicitationId, outcome });
      const deadline = Date.parse(expiresAt);
      for (;;) {
        const taken = await store.take(elicitationId);
        if (taken) {
          const row = await store.get(elicitationId);
          answeredBy.set(question, { id: elicitationId, by: row?.answered_by ?? null });
          closed(taken.status);
          if (taken.status === "accept") return { action: "accept", content: taken.content ?? {} };
          if (taken.status === "decline" || taken.status === "refused") return { action: "decline" };
          if (taken.status === "timeout") return { action: "timeout" };
          return { action: "cancel" };
        }
        if (signal.aborted) {
          // The call ended (the run was stopped, the server withdrew the question); an answer that raced in wins.
          if (await store.close(elicitationId, "cancel")) {
            await store.take(elicitationId);
            closed("cancel");
            return { action: "cancel" };
          }
          continue;
        }
        const left = deadline - now();
        if (left <= 0) {
          if (await store.close(elicitationId, "timeout")) {
            await store.take(elicitationId);
            closed("timeout");
            return { action: "timeout" };
          }
          continue;
        }
        await sleep(Math.min(POLL_MS, left), undefined, { signal }).catch(() => undefined);
      }
    },
    async completed(question) {
      const asked = answeredBy.get(question) ?? askedIds.get(question);
      if (!asked || !(await store.complete(asked.id))) return;
      push(question.call.threadId, "custom", { type: "elicitation_completed", elicitation_id: asked.id });
    },
    async settled(question, outcome: ElicitationOutcome, detail) {
      const asked = answeredBy.get(question);
      answeredBy.delete(question);
      if (asked && question.url) askedIds.set(question, asked);
      const record = question.call.record;
      if (!options.audit || !record) return asked?.id;
      await options.audit.record(
        [
          {
            thread_id: question.call.threadId,
            run_id: record.run_id,
            // The audit's kinds are a closed list; this one is added there (src/audit/events.ts).
            kind: ELICITED,
            subject: `${record.call_id}:${asked?.id ?? "refused"}`,
            node: "execute",
            actor: question.call.principal.user_id,
            code: outcome,
            tool: question.call.tool,
            detail: [
              `server ${question.call.server} asked the owner`,
              asked?.by ? `; answered by ${asked.by}` : "",
              detail ? `: ${detail}` : "",
            ].join(""),
            at: new Date(now()).toISOString(),
          },
        ],
        record.run,
      );
      return asked?.id;
    },
  };
}
