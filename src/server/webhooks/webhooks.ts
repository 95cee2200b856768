/**
 * Run webhooks: checked when a run is created, recorded before it starts,
 * and delivered when the run pauses for a review (`run.review_pending`) and
 * when it ends (`run.ended`: its own end, or, for a run that paused, the end
 * of the resume run that continued it). Each event becomes one row of the
 * outbox (webhook-store.ts); every instance sends from it in a loop, with
 * retries and backoff, recording each attempt.
 *
 * The body is the run's outcome as a client may see it (client-view.ts):
 * ids, statuses and the termination code; no values, no messages, no
 * principal beyond the ids.
 */
import type { ThreadStore } from "../../stores/thread-store.js";
import type { Owner, RunEndHook, RunRow } from "../../stores/thread-rows.js";
import { forClient } from "../client-view.js";
import { checkDestination, parseWebhookUrl, type Resolver } from "./destination.js";
import { postWebhook } from "./sender.js";
import type { WebhooksConfig } from "../../policy/webhook-config.js";
import { newDeliveryId, type Registration, type WebhookEvent, type WebhookStore } from "../../stores/webhook-store.js";
import { ApiError } from "../../errors.js";

export interface WebhooksOptions {
  store: WebhookStore;
  /** The sender loop's store: on the background connections (`Database.background`); default `store`. */
  sender?: WebhookStore;
  threads: ThreadStore;
  config: WebhooksConfig;
  /** `WARRANT_WEBHOOK_SECRET`; absent: webhooks are refused. */
  secret: string | undefined;
  /** How often each instance looks for deliveries due. */
  pollMs: number;
  log: (line: string) => void;
  resolve?: Resolver;
}

export interface Webhooks {
  /** Throws 422 `webhook_refused` (or `unsupported` when none are configured) for a URL that may not be called. */
  check(url: string): Promise<void>;
  register(owner: Owner, threadId: string, runId: string, url: string): Promise<void>;
  /**
   * Records the events a run's end means in the transaction of its final
   * status (`ThreadStore.setRunStatus`): a process that dies after the run
   * ended has recorded them too, so none is lost (and none is recorded twice:
   * each registration moves on once). Undefined without `WARRANT_WEBHOOK_SECRET`:
   * nothing is sent then, and a run's end stays one statement.
   */
  endHook: RunEndHook | undefined;
  /** The run manager's after-end call: records what the end hook could not (a run ended without it), wakes the sender. */
  runEnded(run: RunRow): void;
  stop(): Promise<void>;
}

export function startWebhooks(options: WebhooksOptions): Webhooks {
  const { store, config, secret, log } = options;
  let stopped = false;
  let sending: Promise<void> = Promise.resolve();
  let pendingEnds: Promise<void> = Promise.resolve();

  const outbox = options.sender ?? store;
  const sendDue = async () => {
    for (;;) {
      if (stopped || secret === undefined) return;
      const delivery = await outbox.claim(config.timeout_ms * 2);
      if (!delivery) return;
      const checked = await checkDestination(delivery.url, config.allow, options.resolve);
      if (!checked.ok) {
        await outbox.record(delivery.delivery_id, {
          status: null,
          error: `refused: ${checked.reason}`,
          outcome: "failed",
        });
        continue;
      }
      const attempt = await postWebhook(checked.destination, {
        body: delivery.body,
        secret,
        deliveryId: delivery.delivery_id,
        event: delivery.event,
        timeoutMs: config.timeout_ms,
      });
      const ok = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
      const redirect = attempt.status !== null && attempt.status >= 300 && attempt.status < 400;
      const last = delivery.attempts >= config.max_attempts;
      const error = ok ? null : (attempt.error ?? (redirect ? "redirect not followed" : `answered ${attempt.status}`));
      await outbox.record(delivery.delivery_id, {
        status: attempt.status,
        error,
        outcome: ok ? "delivered" : redirect || last ? "failed" : "retry",
        ...(ok || redirect || last ? {} : { retryAt: new Date(Date.now() + backoff(config, delivery.attempts)) }),
      });
      if (!ok) log(`webhook delivery ${delivery.delivery_id} attempt ${delivery.attempts}: ${error}`);
    }
  };
  const kick = () => {
    sending = sending.then(() => sendDue().catch((error: unknown) => log(`webhook sender failed: ${String(error)}`)));
  };
  const timer = setInterval(kick, options.pollMs);
  timer.unref();

  /** The delivery of `ended` for one registration: its event, the state the registration moves to, its body. */
  const deliveryFor = (ended: RunRow, registration: Registration) => {
    const paused = ended.outcome?.pending_review === true && ended.status === "success";
    const event: WebhookEvent = paused ? "run.review_pending" : "run.ended";
    const deliveryId = newDeliveryId();
    const body = JSON.stringify(forClient(outcomeBody(event, deliveryId, ended, registration)));
    return {
      next: paused ? ("paused" as const) : ("done" as const),
      delivery: { delivery_id: deliveryId, run_id: ended.run_id, event, body },
    };
  };

  const recordEnd = async (run: RunRow) => {
    const registrations = await store.watching(run.thread_id, run.run_id);
    if (registrations.length === 0) return;
    const owner = { tenant: run.tenant, user_id: run.owner };
    const ended = (await options.threads.getRun(owner, run.thread_id, run.run_id)) ?? run;
    for (const registration of registrations) {
      const { next, delivery } = deliveryFor(ended, registration);
      await store.enqueue(registration, next, delivery);
    }
    kick();
  };

  const endHook: RunEndHook = async (client, ended) => {
    for (const registration of await store.watching(ended.thread_id, ended.run_id, client)) {
      const { next, delivery } = deliveryFor(ended, registration);
      await store.enqueueIn(client, registration, next, delivery);
    }
  };

  return {
    async check(url) {
      if (secret === undefined)
        throw new ApiError(
          "unsupported",
          "webhook: webhooks are not configured on this server (WARRANT_WEBHOOK_SECRET)",
        );
      const form = parseWebhookUrl(url, config.allow);
      if (!form.ok) throw new ApiError("webhook_refused", `webhook: ${form.reason}`);
      const checked = await checkDestination(url, config.allow, options.resolve);
      if (!checked.ok) throw new ApiError("webhook_refused", `webhook: ${checked.reason}`);
    },
    register: (owner, threadId, runId, url) => store.register(owner, threadId, runId, url),
    endHook: secret === undefined ? undefined : endHook,
    runEnded(run) {
      if (stopped) return;
      pendingEnds = pendingEnds.then(() =>
        recordEnd(run).catch((error: unknown) =>
          log(`could not record the webhook of run ${run.run_id}: ${String(error)}`),
        ),
      );
    },
    async stop() {
      await pendingEnds;
      stopped = true;
      clearInterval(timer);
      await sending;
    },
  };
}

function outcomeBody(event: WebhookEvent, deliveryId: string, run: RunRow, registration: Registration) {
  return {
    event,
    delivery_id: deliveryId,
    run_id: run.run_id,
    ...(registration.run_id !== run.run_id ? { webhook_run_id: registration.run_id } : {}),
    thread_id: run.thread_id,
    assistant_id: run.assistant_id,
    status: run.status,
    pending_review: run.outcome?.pending_review ?? false,
    outcome_status: run.outcome?.status ?? null,
    termination_reason: run.outcome?.termination_reason ?? null,
    error: run.error ? { error: run.error.error } : null,
    created_at: run.created_at.toISOString(),
    updated_at: run.updated_at.toISOString(),
  };
}

function backoff(config: WebhooksConfig, attempts: number): number {
  const exponential = Math.min(config.retry.max_ms, config.retry.base_ms * 2 ** Math.max(0, attempts - 1));
  return Math.round(exponential * (0.8 + Math.random() * 0.4));
}
