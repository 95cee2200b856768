/**
 * The store's table, in the shape of LangGraph's `PostgresStore`
 * (`@langchain/langgraph-checkpoint-postgres/store`: `namespace_path` =
 * labels joined by `:`, `key`, `value` jsonb, timestamps, `expires_at`), in
 * Warrant's schema and on Warrant's pool. Not `PostgresStore` itself: it opens
 * a pool of its own (the embedded database allows one connection), and its
 * search matches `namespace_path LIKE prefix%`, under which
 * `users:alice` would also match `users:alice2` — a prefix here matches whole
 * labels only.
 *
 * Every namespace given to this module is absolute (the server's prefix
 * included); scoping is `principal-store.ts`'s job.
 */
import type pg from "pg";
import { quoteSchemaName } from "../sql-names.js";

export function storeItemTables(schema: string): string[] {
  const s = quoteSchemaName(schema);
  return [
    `create table if not exists ${s}.store (
      namespace_path text not null,
      key text not null,
      value jsonb not null,
      created_at timestamptz default current_timestamp,
      updated_at timestamptz default current_timestamp,
      expires_at timestamptz,
      primary key (namespace_path, key)
    )`,
    `create index if not exists store_namespace_path on ${s}.store using btree (namespace_path text_pattern_ops)`,
  ];
}

export interface StoredItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export interface ItemSearch {
  prefix: string[];
  filter?: Record<string, unknown> | undefined;
  limit: number;
  offset: number;
}

export interface NamespaceListing {
  prefix: string[];
  suffix?: string[] | undefined;
  maxDepth?: number | undefined;
  limit: number;
  offset: number;
}

/** Namespaces read at most when listing (one principal's own). */
const MAX_NAMESPACES_SCANNED = 10_000;

const SEPARATOR = ":";
const pathOf = (namespace: string[]) => namespace.join(SEPARATOR);

interface ItemRow {
  namespace_path: string;
  key: string;
  value: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

const toItem = (row: ItemRow): StoredItem => ({
  namespace: row.namespace_path.split(SEPARATOR),
  key: row.key,
  value: row.value,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export interface ItemTable {
  get(namespace: string[], key: string): Promise<StoredItem | undefined>;
  put(namespace: string[], key: string, value: Record<string, unknown>): Promise<void>;
  delete(namespace: string[], key: string): Promise<void>;
  search(search: ItemSearch): Promise<StoredItem[]>;
  listNamespaces(listing: NamespaceListing): Promise<string[][]>;
}

export function createItemTable(pool: pg.Pool, schema: string): ItemTable {
  const table = `${quoteSchemaName(schema)}.store`;
  const live = "(expires_at is null or expires_at > now())";
  // The prefix itself, or anything below it by whole labels (no LIKE: labels may hold % and _).
  const under = (parameter: string) =>
    `(namespace_path = ${parameter} or starts_with(namespace_path, ${parameter} || '${SEPARATOR}'))`;
  return {
    async get(namespace, key) {
      const { rows } = await pool.query<ItemRow>(
        `select namespace_path, key, value, created_at, updated_at from ${table}
         where namespace_path = $1 and key = $2 and ${live}`,
        [pathOf(namespace), key],
      );
      return rows[0] ? toItem(rows[0]) : undefined;
    },
    async put(namespace, key, value) {
      await pool.query(
        `insert into ${table} (namespace_path, key, value) values ($1, $2, $3::jsonb)
         on conflict (namespace_path, key)
         do update set value = excluded.value, updated_at = current_timestamp, expires_at = null`,
        [pathOf(namespace), key, JSON.stringify(value)],
      );
    },
    async delete(namespace, key) {
      await pool.query(`delete from ${table} where namespace_path = $1 and key = $2`, [pathOf(namespace), key]);
    },
    async search({ prefix, filter, limit, offset }) {
      const params: unknown[] = [pathOf(prefix), limit, offset];
      let where = `${under("$1")} and ${live}`;
      if (filter && Object.keys(filter).length > 0) {
        params.push(JSON.stringify(filter));
        where += ` and value @> $${params.length}::jsonb`;
      }
      const { rows } = await pool.query<ItemRow>(
        `select namespace_path, key, value, created_at, updated_at from ${table}
         where ${where} order by updated_at desc, namespace_path, key limit $2 offset $3`,
        params,
      );
      return rows.map(toItem);
    },
    async listNamespaces({ prefix, suffix, maxDepth, limit, offset }) {
      const { rows } = await pool.query<{ namespace_path: string }>(
        `select distinct namespace_path from ${table} where ${under("$1")} and ${live}
         order by namespace_path limit ${MAX_NAMESPACES_SCANNED}`,
        [pathOf(prefix)],
      );
      const seen = new Set<string>();
      const namespaces: string[][] = [];
      for (const { namespace_path } of rows) {
        let namespace = namespace_path.split(SEPARATOR);
        if (suffix && suffix.length > 0) {
          const tail = namespace.slice(-suffix.length);
          if (tail.length !== suffix.length || tail.some((label, index) => label !== suffix[index])) continue;
        }
        if (maxDepth !== undefined) namespace = namespace.slice(0, maxDepth);
        const joined = pathOf(namespace);
        if (seen.has(joined)) continue;
        seen.add(joined);
        namespaces.push(namespace);
      }
      return namespaces.slice(offset, offset + limit);
    },
  };
}
