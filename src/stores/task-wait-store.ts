/**
 * Task waits in Postgres: one row a write its server runs as an MCP task that a paused thread waits for (the
 * execute node left it to the poller, src/server/crons/task-waits.ts). Any instance's poller takes the due rows
 * under a short lease (`FOR UPDATE SKIP LOCKED`, so two instances never poll one wait at once), asks the server,
 * and either moves `next_poll_at` on or, once the task ended or the deadline passed, resumes the thread and
 * removes the row. The owner's principal is kept here: the resume runs as the owner, never as a client's claim.
 */
import type pg from "pg";
import type { Principal } from "../auth/principal.js";
import { quoteSchemaName } from "../sql-names.js";

export function taskWaitTables(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create table if not exists ${s}.task_waits (
      thread_id text not null,
      call_id text not null,
      attempt integer not null,
      server text not null,
      tool text not null,
      task_id text not null,
      principal jsonb not null,
      assistant_id text not null,
      next_poll_at timestamptz not null,
      deadline timestamptz not null,
      lease_until timestamptz,
      polls integer not null default 0,
      cancel_requested boolean not null default false,
      created_at timestamptz not null default now(),
      primary key (thread_id, call_id, attempt)
    )`,
    `create index if not exists task_waits_due on ${s}.task_waits (next_poll_at)`,
  ];
}

/** One task a paused thread waits for. */
export interface TaskWait {
  thread_id: string;
  call_id: string;
  attempt: number;
  server: string;
  tool: string;
  task_id: string;
  /** The run's owner: the poller's `tasks/get` and the resume run act for them. */
  principal: Principal;
  assistant_id: string;
  next_poll_at: Date;
  /** The contract's deadline for the call (its `timeout_ms` from the send): past it, the thread resumes anyway. */
  deadline: Date;
  /** The owner cancelled the run that waits: the poller cancels the task and resumes the thread to settle it. */
  cancel_requested?: boolean;
}

export type TaskWaitKey = Pick<TaskWait, "thread_id" | "call_id" | "attempt">;

export interface TaskWaitStore {
  /** Records (or moves) a wait. */
  schedule(wait: TaskWait): Promise<void>;
  /** Takes up to `limit` due waits for `leaseMs` (no other instance takes them meanwhile), oldest first. */
  claimDue(limit: number, leaseMs: number): Promise<TaskWait[]>;
  /** The task still works: poll again at `at`, lease released. */
  reschedule(key: TaskWaitKey, at: Date): Promise<void>;
  /** The wait is over (the thread was resumed, or cancelled). */
  remove(key: TaskWaitKey): Promise<void>;
  /** Asks the poller to cancel the thread's tasks now; how many waits it marked. */
  requestCancel(threadId: string): Promise<number>;
  /** A thread's waits. */
  forThread(threadId: string): Promise<TaskWait[]>;
}

const COLUMNS =
  "thread_id, call_id, attempt, server, tool, task_id, principal, assistant_id, next_poll_at, deadline" as const;
const READ = `${COLUMNS}, cancel_requested`;

export function createTaskWaitStore(pool: pg.Pool, schema: string): TaskWaitStore {
  const table = `${quoteSchemaName(schema)}.task_waits`;
  const key = "thread_id = $1 and call_id = $2 and attempt = $3";
  const keyValues = (wait: TaskWaitKey) => [wait.thread_id, wait.call_id, wait.attempt];
  return {
    async schedule(wait) {
      await pool.query(
        `insert into ${table} (${COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         on conflict (thread_id, call_id, attempt) do update
           set task_id = excluded.task_id, next_poll_at = excluded.next_poll_at, deadline = excluded.deadline,
               lease_until = null`,
        [
          ...keyValues(wait),
          wait.server,
          wait.tool,
          wait.task_id,
          JSON.stringify(wait.principal),
          wait.assistant_id,
          wait.next_poll_at,
          wait.deadline,
        ],
      );
    },
    async claimDue(limit, leaseMs) {
      const { rows } = await pool.query<TaskWait>(
        `update ${table} set lease_until = now() + make_interval(secs => $2::double precision / 1000),
           polls = polls + 1
         where (thread_id, call_id, attempt) in (
           select thread_id, call_id, attempt from ${table}
           where next_poll_at <= now() and (lease_until is null or lease_until < now())
           order by next_poll_at limit $1 for update skip locked)
         returning ${READ}`,
        [limit, leaseMs],
      );
      return rows;
    },
    async reschedule(wait, at) {
      await pool.query(`update ${table} set next_poll_at = $4, lease_until = null where ${key}`, [
        ...keyValues(wait),
        at,
      ]);
    },
    async remove(wait) {
      await pool.query(`delete from ${table} where ${key}`, keyValues(wait));
    },
    async requestCancel(threadId) {
      const { rowCount } = await pool.query(
        `update ${table} set cancel_requested = true, next_poll_at = now(), lease_until = null where thread_id = $1`,
        [threadId],
      );
      return rowCount ?? 0;
    },
    async forThread(threadId) {
      const { rows } = await pool.query<TaskWait>(
        `select ${READ} from ${table} where thread_id = $1 order by call_id, attempt`,
        [threadId],
      );
      return rows;
    },
  };
}
