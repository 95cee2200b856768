/**
 * Counts what reaches Postgres, so the bench reports statements and
 * transactions it saw rather than estimates. Every `query` call on a pooled
 * client is one statement (one round trip; `pool.query` runs on a pooled
 * client too, so it is seen there once). A transaction is an explicit
 * `BEGIN … COMMIT|ROLLBACK` on one client, or a statement run outside one
 * (autocommit).
 */
import type pg from "pg";

/** Totals so far; subtract two snapshots to get one run's share. */
export interface QueryCounts {
  statements: number;
  transactions: number;
}

/** The first keyword of a statement, lower case ("" for none). */
function leadingKeyword(sql: string): string {
  const match = /^\s*([A-Za-z]+)/.exec(sql);
  return match ? match[1]!.toLowerCase() : "";
}

const OPENS = new Set(["begin", "start"]);
const CLOSES = new Set(["commit", "rollback", "end", "abort"]);

/** Tallies statements and transactions per connection (a transaction belongs to one client). */
export class QueryCounter {
  private statements = 0;
  private transactions = 0;
  /** Connections inside an explicit transaction block. */
  private readonly open = new WeakSet<object>();

  /** Records one statement sent on `connection`. */
  record(connection: object, sql: string): void {
    this.statements += 1;
    const keyword = leadingKeyword(sql);
    if (OPENS.has(keyword)) {
      this.open.add(connection);
      return;
    }
    if (this.open.has(connection)) {
      if (CLOSES.has(keyword)) {
        this.open.delete(connection);
        this.transactions += 1;
      }
      return;
    }
    this.transactions += 1;
  }

  snapshot(): QueryCounts {
    return { statements: this.statements, transactions: this.transactions };
  }
}

/** `after - before`, field by field. */
export function countsBetween(before: QueryCounts, after: QueryCounts): QueryCounts {
  return { statements: after.statements - before.statements, transactions: after.transactions - before.transactions };
}

/** The SQL text of a `query` call's first argument (a string or a `{ text }` config). */
export function sqlOf(query: unknown): string {
  if (typeof query === "string") return query;
  if (typeof query === "object" && query !== null) {
    const text = (query as { text?: unknown }).text;
    if (typeof text === "string") return text;
  }
  return "";
}

/** The part of a pg client the counter patches. */
export interface Queryable {
  query: (...args: never[]) => unknown;
}

/** Makes every later `query` on `client` count on `counter` first. */
export function countClient(client: Queryable, counter: QueryCounter): void {
  const original = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((...args: unknown[]) => {
    counter.record(client, sqlOf(args[0]));
    return original(...args);
  }) as Queryable["query"];
}

/**
 * Counts every query of every client `pool` connects from now on. Pass it as
 * `openDatabase({ observePool })`, which calls it before the pool's first
 * connection, so no client escapes.
 */
export function countPool(pool: pg.Pool, counter: QueryCounter): void {
  pool.on("connect", (client) => countClient(client as unknown as Queryable, counter));
}
