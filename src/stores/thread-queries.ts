/**
 * The threads table, owner by owner: create, read, search, count, patch and
 * delete a thread, and the reviewer inbox's tenant-wide reads. Every
 * owner's read and write names the owner: a thread that belongs to somebody
 * else is indistinguishable from one that does not exist.
 */
import type pg from "pg";
import { quoteSchemaName } from "../sql-names.js";
import { type Owner, THREAD_COLUMNS, type ThreadRow, type ThreadSearch } from "./thread-rows.js";

/** Metadata keys matched against the thread row's columns, not its metadata json. */
const COLUMN_KEYS: Record<string, string> = {
  owner: "owner",
  tenant: "tenant",
  graph_id: "graph_id",
  assistant_id: "graph_id",
};

export type ThreadFilter = Omit<ThreadSearch, "limit" | "offset" | "sort_by" | "sort_order">;

/** The threads table's reads and writes (everything of `ThreadStore` but the lease and the runs). */
export interface ThreadQueries {
  create(
    owner: Owner,
    thread: { thread_id: string; metadata: Record<string, unknown>; graph_id?: string | undefined },
  ): Promise<ThreadRow | undefined>;
  get(owner: Owner, threadId: string): Promise<ThreadRow | undefined>;
  search(owner: Owner, query: ThreadSearch): Promise<ThreadRow[]>;
  count(owner: Owner, query: ThreadFilter): Promise<number>;
  patchMetadata(owner: Owner, threadId: string, metadata: Record<string, unknown>): Promise<ThreadRow | undefined>;
  /** Deletes an idle thread (and its runs); false when missing or busy. */
  delete(owner: Owner, threadId: string): Promise<"deleted" | "missing" | "busy">;
  /** The reviewer inbox's threads: interrupted threads of a tenant (of one owner, when given), newest first. */
  interruptedThreads(tenant: string, options: { owner?: string | undefined; limit: number }): Promise<ThreadRow[]>;
  /** A thread of the tenant, whoever owns it (the inbox's lookup; never an owner's route). */
  getInTenant(tenant: string, threadId: string): Promise<ThreadRow | undefined>;
}

/** The WHERE of a search or count of `owner`'s threads, with its parameters ($1 tenant, $2 owner, then the filter's). */
export function threadFilter(owner: Owner, query: ThreadFilter): { where: string; params: unknown[] } {
  const clauses = ["tenant = $1", "owner = $2"];
  const params: unknown[] = [owner.tenant, owner.user_id];
  const json: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query.metadata ?? {})) {
    const column = Object.hasOwn(COLUMN_KEYS, key) ? COLUMN_KEYS[key] : undefined;
    if (column === undefined) {
      json[key] = value;
    } else if (typeof value !== "string") {
      // These columns hold strings: any other value matches no thread.
      clauses.push("false");
    } else {
      params.push(value);
      clauses.push(`${column} = $${params.length}`);
    }
  }
  if (Object.keys(json).length > 0) {
    params.push(JSON.stringify(json));
    clauses.push(`metadata @> $${params.length}::jsonb`);
  }
  if (query.values && Object.keys(query.values).length > 0) {
    params.push(JSON.stringify(query.values));
    clauses.push(`state_values @> $${params.length}::jsonb`);
  }
  if (query.status) {
    params.push(query.status);
    clauses.push(`status = $${params.length}`);
  }
  if (query.ids) {
    params.push(query.ids);
    clauses.push(`thread_id = any($${params.length}::uuid[])`);
  }
  return { where: clauses.join(" and "), params };
}

export function createThreadQueries(pool: pg.Pool, schema: string): ThreadQueries {
  const s = quoteSchemaName(schema);
  const one = async (sql: string, params: unknown[]): Promise<ThreadRow | undefined> =>
    (await pool.query<ThreadRow>(sql, params)).rows[0];
  const many = async (sql: string, params: unknown[]): Promise<ThreadRow[]> =>
    (await pool.query<ThreadRow>(sql, params)).rows;
  const get: ThreadQueries["get"] = (owner, threadId) =>
    one(`select ${THREAD_COLUMNS} from ${s}.threads where thread_id = $1 and tenant = $2 and owner = $3`, [
      threadId,
      owner.tenant,
      owner.user_id,
    ]);
  return {
    create: (owner, thread) =>
      one(
        `insert into ${s}.threads (thread_id, owner, tenant, metadata, graph_id) values ($1, $2, $3, $4::jsonb, $5)
         on conflict (thread_id) do nothing returning ${THREAD_COLUMNS}`,
        [thread.thread_id, owner.user_id, owner.tenant, JSON.stringify(thread.metadata), thread.graph_id ?? null],
      ),
    get,
    async search(owner, query) {
      const { where, params } = threadFilter(owner, query);
      params.push(query.limit, query.offset);
      // Column and direction come from closed lists (never from request text).
      const column = { thread_id: "thread_id", status: "status", created_at: "created_at", updated_at: "updated_at" }[
        query.sort_by ?? "updated_at"
      ];
      const direction = query.sort_order === "asc" ? "asc" : "desc";
      return many(
        `select ${THREAD_COLUMNS} from ${s}.threads where ${where}
          order by ${column} ${direction}, thread_id ${direction}
          limit $${params.length - 1} offset $${params.length}`,
        params,
      );
    },
    async count(owner, query) {
      const { where, params } = threadFilter(owner, query);
      const result = await pool.query<{ n: string }>(
        `select count(*)::text as n from ${s}.threads where ${where}`,
        params,
      );
      return Number(result.rows[0]?.n ?? 0);
    },
    patchMetadata: (owner, threadId, metadata) =>
      one(
        `update ${s}.threads set metadata = metadata || $4::jsonb, updated_at = now()
          where thread_id = $1 and tenant = $2 and owner = $3
          returning ${THREAD_COLUMNS}`,
        [threadId, owner.tenant, owner.user_id, JSON.stringify(metadata)],
      ),
    async delete(owner, threadId) {
      const deleted = await pool.query(
        `delete from ${s}.threads
          where thread_id = $1 and tenant = $2 and owner = $3 and (active_run is null or lease_until < now())
          returning thread_id::text`,
        [threadId, owner.tenant, owner.user_id],
      );
      if (deleted.rows.length > 0) return "deleted";
      return (await get(owner, threadId)) ? "busy" : "missing";
    },
    interruptedThreads: (tenant, options) =>
      many(
        `select ${THREAD_COLUMNS} from ${s}.threads where tenant = $1 and status = 'interrupted' and ($2::text is null or owner = $2)
          order by updated_at desc, thread_id limit $3`,
        [tenant, options.owner ?? null, options.limit],
      ),
    getInTenant: (tenant, threadId) =>
      one(`select ${THREAD_COLUMNS} from ${s}.threads where thread_id = $1 and tenant = $2`, [threadId, tenant]),
  };
}
