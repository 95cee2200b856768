/**
 * The bench's Postgres counter: every query is a statement; a transaction is
 * an explicit BEGIN…COMMIT/ROLLBACK on one connection or an autocommit
 * statement.
 */
import { EventEmitter } from "node:events";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { QueryCounter, countClient, countPool, countsBetween, sqlOf, type Queryable } from "../../bench/pg-counter.js";

function fakeClient(): Queryable & { sent: unknown[][] } {
  const sent: unknown[][] = [];
  return {
    sent,
    query: ((...args: unknown[]) => {
      sent.push(args);
      return Promise.resolve({ rows: [], args });
    }) as Queryable["query"],
  };
}

describe("QueryCounter", () => {
  it("starts at zero", () => {
    expect(new QueryCounter().snapshot()).toEqual({ statements: 0, transactions: 0 });
  });

  it("counts each statement outside a transaction block as its own transaction", () => {
    const counter = new QueryCounter();
    const connection = {};
    counter.record(connection, "select 1");
    counter.record(connection, "insert into t values (1)");
    expect(counter.snapshot()).toEqual({ statements: 2, transactions: 2 });
  });

  it("counts BEGIN … COMMIT as one transaction and every statement in it, BEGIN and COMMIT included", () => {
    const counter = new QueryCounter();
    const connection = {};
    for (const sql of ["BEGIN", "insert into a values (1)", "insert into b values (2)", "COMMIT"])
      counter.record(connection, sql);
    expect(counter.snapshot()).toEqual({ statements: 4, transactions: 1 });
  });

  it("ends a block on ROLLBACK too, and reads keywords in any case after leading whitespace", () => {
    const counter = new QueryCounter();
    const connection = {};
    for (const sql of ["  begin;", "update t set x = 1", "\n rollback"]) counter.record(connection, sql);
    for (const sql of ["start transaction", "select 1", "end"]) counter.record(connection, sql);
    expect(counter.snapshot()).toEqual({ statements: 6, transactions: 2 });
  });

  it("keeps connections apart: another client's autocommit statement inside one client's block is its own transaction", () => {
    const counter = new QueryCounter();
    const inBlock = {};
    const other = {};
    counter.record(inBlock, "BEGIN");
    counter.record(other, "select 1");
    counter.record(inBlock, "insert into t values (1)");
    expect(counter.snapshot()).toEqual({ statements: 3, transactions: 1 });
    counter.record(inBlock, "COMMIT");
    expect(counter.snapshot()).toEqual({ statements: 4, transactions: 2 });
  });

  it("counts an empty or unreadable statement as an autocommit statement", () => {
    const counter = new QueryCounter();
    counter.record({}, "");
    expect(counter.snapshot()).toEqual({ statements: 1, transactions: 1 });
  });
});

describe("countsBetween", () => {
  it("subtracts field by field", () => {
    expect(countsBetween({ statements: 3, transactions: 1 }, { statements: 10, transactions: 4 })).toEqual({
      statements: 7,
      transactions: 3,
    });
  });
});

describe("sqlOf", () => {
  it("reads a string, a { text } config, and gives '' for anything else", () => {
    expect(sqlOf("select 1")).toBe("select 1");
    expect(sqlOf({ text: "select $1", values: [1] })).toBe("select $1");
    expect(sqlOf({ name: "prepared" })).toBe("");
    expect(sqlOf(undefined)).toBe("");
  });
});

describe("countClient and countPool", () => {
  it("counts each query on a wrapped client and passes arguments and result through unchanged", async () => {
    const counter = new QueryCounter();
    const client = fakeClient();
    countClient(client, counter);
    const result = await (client.query as unknown as (...args: unknown[]) => Promise<{ args: unknown[] }>)(
      { text: "select $1" },
      [7],
    );
    expect(result.args).toEqual([{ text: "select $1" }, [7]]);
    expect(client.sent).toEqual([[{ text: "select $1" }, [7]]]);
    expect(counter.snapshot()).toEqual({ statements: 1, transactions: 1 });
  });

  it("wraps every client the pool connects, and only those", () => {
    const counter = new QueryCounter();
    const pool = new EventEmitter();
    const before = fakeClient();
    countPool(pool as unknown as pg.Pool, counter);
    const first = fakeClient();
    const second = fakeClient();
    pool.emit("connect", first);
    pool.emit("connect", second);
    const send = (client: Queryable, sql: string) => (client.query as unknown as (sql: string) => unknown)(sql);
    send(first, "BEGIN");
    send(second, "select 1");
    send(first, "COMMIT");
    send(before, "select 2");
    expect(counter.snapshot()).toEqual({ statements: 3, transactions: 2 });
  });
});
