/**
 * Webhooks in Postgres: the registrations (a run's `webhook`, and where it
 * stands: `armed` until its run ends, `paused` while the run waits for a
 * review, whose resume run's end it then reports, `done`), and the
 * deliveries, an outbox any instance sends from: one row per (registration,
 * run, event), so an event is delivered once however often it is seen, with
 * its attempts, last answer and status (`pending`, `delivered`, `failed`).
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { Owner } from "./thread-rows.js";
import { quoteSchemaName } from "../sql-names.js";

export function webhookTables(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create table if not exists ${s}.run_webhooks (
      run_id uuid primary key,
      thread_id uuid not null,
      tenant text not null,
      owner text not null,
      url text not null,
      state text not null default 'armed',
      created_at timestamptz not null default now()
    )`,
    `create index if not exists run_webhooks_thread on ${s}.run_webhooks (thread_id) where state = 'paused'`,
    `create table if not exists ${s}.webhook_deliveries (
      delivery_id uuid primary key,
      registration uuid not null references ${s}.run_webhooks (run_id) on delete cascade,
      run_id uuid not null,
      event text not null,
      url text not null,
      body text not null,
      status text not null default 'pending',
      attempts integer not null default 0,
      last_status integer,
      last_error text,
      next_attempt_at timestamptz not null default now(),
      claimed_until timestamptz,
      created_at timestamptz not null default now(),
      delivered_at timestamptz,
      unique (registration, run_id, event)
    )`,
    `create index if not exists webhook_deliveries_pending on ${s}.webhook_deliveries (next_attempt_at) where status = 'pending'`,
  ];
}

export type WebhookEvent = "run.review_pending" | "run.ended";

export interface Registration {
  run_id: string;
  thread_id: string;
  tenant: string;
  owner: string;
  url: string;
  state: "armed" | "paused" | "done";
}

export interface Delivery {
  delivery_id: string;
  registration: string;
  run_id: string;
  event: WebhookEvent;
  url: string;
  body: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
}

export interface WebhookStore {
  register(owner: Owner, threadId: string, runId: string, url: string): Promise<void>;
  /**
   * Registrations the end of `runId` on `threadId` reports to: its own, and those paused on the thread.
   * With `db`, read on that client (a run end's transaction).
   */
  watching(threadId: string, runId: string, db?: Queryable): Promise<Registration[]>;
  /**
   * `enqueue` inside a transaction the caller holds (`db`, e.g. the run's
   * final status update): the state move and the delivery commit with it.
   */
  enqueueIn(
    db: Queryable,
    registration: Registration,
    next: Registration["state"],
    delivery: { delivery_id: string; run_id: string; event: WebhookEvent; body: string },
  ): Promise<boolean>;
  /** Moves the registration on and records the delivery (once per registration, run and event). */
  enqueue(
    registration: Registration,
    next: Registration["state"],
    delivery: { delivery_id: string; run_id: string; event: WebhookEvent; body: string },
  ): Promise<boolean>;
  /** Takes the next due delivery for `claimMs` (counting the attempt), if any. */
  claim(claimMs: number): Promise<Delivery | undefined>;
  /** Records an attempt's result: delivered, retry at `retryAt`, or failed for good. */
  record(
    deliveryId: string,
    result: { status: number | null; error: string | null; outcome: "delivered" | "failed" | "retry"; retryAt?: Date },
  ): Promise<void>;
}

/** A pool or a client in a transaction. */
export type Queryable = Pick<pg.ClientBase, "query">;

export function createWebhookStore(pool: pg.Pool, schema: string): WebhookStore {
  const s = quoteSchemaName(schema);
  /** Moves the registration on and inserts the delivery, on `db`; false when the move or the insert found it done. */
  const moveAndInsert: WebhookStore["enqueueIn"] = async (db, registration, next, delivery) => {
    const moved = await db.query(`update ${s}.run_webhooks set state = $2 where run_id = $1 and state = $3`, [
      registration.run_id,
      next,
      registration.state,
    ]);
    if ((moved.rowCount ?? 0) === 0) return false;
    const inserted = await db.query(
      `insert into ${s}.webhook_deliveries (delivery_id, registration, run_id, event, url, body)
       values ($1, $2, $3, $4, $5, $6) on conflict (registration, run_id, event) do nothing`,
      [delivery.delivery_id, registration.run_id, delivery.run_id, delivery.event, registration.url, delivery.body],
    );
    return (inserted.rowCount ?? 0) > 0;
  };
  return {
    enqueueIn: moveAndInsert,
    async register(owner, threadId, runId, url) {
      await pool.query(
        `insert into ${s}.run_webhooks (run_id, thread_id, tenant, owner, url) values ($1, $2, $3, $4, $5)
         on conflict (run_id) do nothing`,
        [runId, threadId, owner.tenant, owner.user_id, url],
      );
    },
    async watching(threadId, runId, db = pool) {
      const { rows } = await db.query<Registration>(
        `select run_id, thread_id, tenant, owner, url, state from ${s}.run_webhooks
         where (run_id = $2 and state = 'armed') or (thread_id = $1 and state = 'paused' and run_id <> $2)`,
        [threadId, runId],
      );
      return rows;
    },
    async enqueue(registration, next, delivery) {
      const client = await pool.connect();
      try {
        await client.query("begin");
        const moved = await client.query(`update ${s}.run_webhooks set state = $2 where run_id = $1 and state = $3`, [
          registration.run_id,
          next,
          registration.state,
        ]);
        if ((moved.rowCount ?? 0) === 0) {
          await client.query("rollback");
          return false;
        }
        const inserted = await client.query(
          `insert into ${s}.webhook_deliveries (delivery_id, registration, run_id, event, url, body)
           values ($1, $2, $3, $4, $5, $6) on conflict (registration, run_id, event) do nothing`,
          [delivery.delivery_id, registration.run_id, delivery.run_id, delivery.event, registration.url, delivery.body],
        );
        await client.query("commit");
        return (inserted.rowCount ?? 0) > 0;
      } catch (error) {
        await client.query("rollback").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async claim(claimMs) {
      const { rows } = await pool.query<Delivery>(
        `update ${s}.webhook_deliveries set attempts = attempts + 1,
           claimed_until = now() + $1 * interval '1 millisecond'
         where delivery_id = (
           select delivery_id from ${s}.webhook_deliveries
           where status = 'pending' and next_attempt_at <= now() and (claimed_until is null or claimed_until < now())
           order by next_attempt_at limit 1 for update skip locked)
         returning delivery_id, registration, run_id, event, url, body, status, attempts`,
        [claimMs],
      );
      return rows[0];
    },
    async record(deliveryId, result) {
      await pool.query(
        `update ${s}.webhook_deliveries set
           status = case when $4 = 'retry' then 'pending' else $4 end,
           last_status = $2, last_error = $3, claimed_until = null,
           next_attempt_at = coalesce($5, next_attempt_at),
           delivered_at = case when $4 = 'delivered' then now() else delivered_at end
         where delivery_id = $1`,
        [deliveryId, result.status, result.error, result.outcome, result.retryAt ?? null],
      );
    },
  };
}

export const newDeliveryId = (): string => randomUUID();
