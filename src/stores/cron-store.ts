/**
 * Crons in Postgres. One row a cron, owned by the principal that created it.
 * `next_run_at` is the occurrence due next (null: the cron is past its
 * `end_time`); an instance fires an occurrence only after moving
 * `next_run_at` on with `UPDATE … WHERE next_run_at = <the occurrence it
 * read>`, so of all the instances that saw it due exactly one fires it.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { Principal } from "../auth/principal.js";
import type { Owner } from "./thread-rows.js";
import { quoteSchemaName } from "../sql-names.js";

export function cronTables(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create table if not exists ${s}.crons (
      cron_id uuid primary key,
      tenant text not null,
      owner text not null,
      principal jsonb not null,
      assistant_id text not null,
      thread_id uuid,
      schedule text not null,
      timezone text not null,
      payload jsonb not null,
      metadata jsonb not null default '{}',
      end_time timestamptz,
      on_run_completed text not null default 'delete',
      enabled boolean not null default true,
      next_run_at timestamptz,
      last_fired_at timestamptz,
      last_run_id uuid,
      last_error jsonb,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`,
    `create index if not exists crons_owner on ${s}.crons (tenant, owner, created_at)`,
    `create index if not exists crons_due on ${s}.crons (next_run_at) where enabled and next_run_at is not null`,
  ];
}

/** What a cron's runs are started with. */
export interface CronPayload {
  input: unknown;
  metadata: Record<string, unknown>;
  webhook?: string | undefined;
}

export interface CronRow {
  cron_id: string;
  tenant: string;
  owner: string;
  /** The creator as the directory listed them then; read again from the directory at every firing. */
  principal: Principal;
  assistant_id: string;
  thread_id: string | null;
  schedule: string;
  timezone: string;
  payload: CronPayload;
  metadata: Record<string, unknown>;
  end_time: Date | null;
  on_run_completed: "delete" | "keep";
  enabled: boolean;
  next_run_at: Date | null;
  last_fired_at: Date | null;
  last_run_id: string | null;
  last_error: { error: string; message: string } | null;
  created_at: Date;
  updated_at: Date;
}

export type NewCron = Pick<
  CronRow,
  | "principal"
  | "assistant_id"
  | "thread_id"
  | "schedule"
  | "timezone"
  | "payload"
  | "metadata"
  | "end_time"
  | "on_run_completed"
  | "enabled"
  | "next_run_at"
>;

export type CronChanges = Partial<
  Pick<
    CronRow,
    "schedule" | "timezone" | "payload" | "metadata" | "end_time" | "on_run_completed" | "enabled" | "next_run_at"
  >
>;

export interface CronSearch {
  assistant_id?: string | undefined;
  thread_id?: string | undefined;
  enabled?: boolean | undefined;
  metadata?: Record<string, unknown> | undefined;
  limit: number;
  offset: number;
  sort_by: "cron_id" | "assistant_id" | "thread_id" | "next_run_date" | "end_time" | "created_at" | "updated_at";
  sort_order: "asc" | "desc";
}

export interface CronStore {
  /** Inserts the cron unless the owner already has `limit` of them (undefined then). */
  create(cron: NewCron, limit: number): Promise<CronRow | undefined>;
  get(owner: Owner, cronId: string): Promise<CronRow | undefined>;
  search(owner: Owner, search: CronSearch): Promise<CronRow[]>;
  count(owner: Owner, search: Pick<CronSearch, "assistant_id" | "thread_id" | "metadata">): Promise<number>;
  update(owner: Owner, cronId: string, changes: CronChanges): Promise<CronRow | undefined>;
  delete(owner: Owner, cronId: string): Promise<boolean>;
  /** Enabled crons whose occurrence is due, oldest first. */
  due(limit: number): Promise<CronRow[]>;
  /**
   * Moves the cron past the occurrence `due`; false when another instance did first (or the cron changed).
   * Compared at millisecond precision: `due` went through a JavaScript Date, the column keeps microseconds.
   */
  claim(cronId: string, due: Date, next: Date | null): Promise<boolean>;
  /** Records what the last firing did. */
  recordFiring(cronId: string, result: { run_id?: string; error?: { error: string; message: string } }): Promise<void>;
}

const UPDATABLE = [
  "schedule",
  "timezone",
  "payload",
  "metadata",
  "end_time",
  "on_run_completed",
  "enabled",
  "next_run_at",
] as const satisfies readonly (keyof CronChanges)[];

const SORT_COLUMNS: Record<CronSearch["sort_by"], string> = {
  cron_id: "cron_id",
  assistant_id: "assistant_id",
  thread_id: "thread_id",
  next_run_date: "next_run_at",
  end_time: "end_time",
  created_at: "created_at",
  updated_at: "updated_at",
};

export function createCronStore(pool: pg.Pool, schema: string): CronStore {
  const table = `${quoteSchemaName(schema)}.crons`;
  const filters = (owner: Owner, search: Partial<CronSearch>, params: unknown[]) => {
    params.push(owner.tenant, owner.user_id);
    const where = [`tenant = $${params.length - 1}`, `owner = $${params.length}`];
    if (search.assistant_id !== undefined) {
      params.push(search.assistant_id);
      where.push(`assistant_id = $${params.length}`);
    }
    if (search.thread_id !== undefined) {
      params.push(search.thread_id);
      where.push(`thread_id = $${params.length}`);
    }
    if (search.enabled !== undefined) {
      params.push(search.enabled);
      where.push(`enabled = $${params.length}`);
    }
    if (search.metadata !== undefined && Object.keys(search.metadata).length > 0) {
      params.push(JSON.stringify(search.metadata));
      where.push(`metadata @> $${params.length}::jsonb`);
    }
    return where.join(" and ");
  };
  return {
    async create(cron, limit) {
      const client = await pool.connect();
      try {
        await client.query("begin");
        // One owner's creations queue here, so two at once cannot both pass the limit.
        await client.query("select pg_advisory_xact_lock(hashtext($1))", [
          `warrant-crons:${cron.principal.tenant}:${cron.principal.user_id}`,
        ]);
        const counted = await client.query<{ n: string }>(
          `select count(*) as n from ${table} where tenant = $1 and owner = $2`,
          [cron.principal.tenant, cron.principal.user_id],
        );
        if (Number(counted.rows[0]?.n ?? 0) >= limit) {
          await client.query("rollback");
          return undefined;
        }
        const { rows } = await client.query<CronRow>(
          `insert into ${table} (cron_id, tenant, owner, principal, assistant_id, thread_id, schedule, timezone,
             payload, metadata, end_time, on_run_completed, enabled, next_run_at)
           values ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9::jsonb, $10::jsonb, $11, $12, $13, $14)
           returning *`,
          [
            randomUUID(),
            cron.principal.tenant,
            cron.principal.user_id,
            JSON.stringify(cron.principal),
            cron.assistant_id,
            cron.thread_id,
            cron.schedule,
            cron.timezone,
            JSON.stringify(cron.payload),
            JSON.stringify(cron.metadata),
            cron.end_time,
            cron.on_run_completed,
            cron.enabled,
            cron.next_run_at,
          ],
        );
        await client.query("commit");
        return rows[0];
      } catch (error) {
        await client.query("rollback").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async get(owner, cronId) {
      const { rows } = await pool.query<CronRow>(
        `select * from ${table} where cron_id = $1 and tenant = $2 and owner = $3`,
        [cronId, owner.tenant, owner.user_id],
      );
      return rows[0];
    },
    async search(owner, search) {
      const params: unknown[] = [];
      const where = filters(owner, search, params);
      params.push(search.limit, search.offset);
      const order = `${SORT_COLUMNS[search.sort_by]} ${search.sort_order === "asc" ? "asc" : "desc"} nulls last`;
      const { rows } = await pool.query<CronRow>(
        `select * from ${table} where ${where} order by ${order}, cron_id
         limit $${params.length - 1} offset $${params.length}`,
        params,
      );
      return rows;
    },
    async count(owner, search) {
      const params: unknown[] = [];
      const where = filters(owner, search, params);
      const { rows } = await pool.query<{ n: string }>(`select count(*) as n from ${table} where ${where}`, params);
      return Number(rows[0]?.n ?? 0);
    },
    async update(owner, cronId, changes) {
      const params: unknown[] = [cronId, owner.tenant, owner.user_id];
      const sets: string[] = ["updated_at = now()"];
      for (const column of UPDATABLE) {
        const value = changes[column];
        if (value === undefined) continue;
        const json = column === "payload" || column === "metadata";
        params.push(json ? JSON.stringify(value) : value);
        sets.push(`${column} = $${params.length}${json ? "::jsonb" : ""}`);
      }
      const { rows } = await pool.query<CronRow>(
        `update ${table} set ${sets.join(", ")} where cron_id = $1 and tenant = $2 and owner = $3 returning *`,
        params,
      );
      return rows[0];
    },
    async delete(owner, cronId) {
      const { rowCount } = await pool.query(`delete from ${table} where cron_id = $1 and tenant = $2 and owner = $3`, [
        cronId,
        owner.tenant,
        owner.user_id,
      ]);
      return (rowCount ?? 0) > 0;
    },
    async due(limit) {
      const { rows } = await pool.query<CronRow>(
        `select * from ${table} where enabled and next_run_at is not null and next_run_at <= now()
         order by next_run_at limit $1`,
        [limit],
      );
      return rows;
    },
    async claim(cronId, due, next) {
      const { rowCount } = await pool.query(
        `update ${table} set next_run_at = $3, last_fired_at = now(), updated_at = now()
         where cron_id = $1 and enabled
           and date_trunc('milliseconds', next_run_at) = date_trunc('milliseconds', $2::timestamptz)`,
        [cronId, due, next],
      );
      return (rowCount ?? 0) === 1;
    },
    async recordFiring(cronId, result) {
      await pool.query(
        `update ${table} set last_run_id = coalesce($2, last_run_id), last_error = $3::jsonb where cron_id = $1`,
        [cronId, result.run_id ?? null, result.error ? JSON.stringify(result.error) : null],
      );
    },
  };
}
