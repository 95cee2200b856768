/**
 * The relay that lets several worker processes share the embedded PGlite
 * (src/cluster/wire-relay.ts): connections that prepare the same statement
 * names, run transactions at once, fail mid-transaction and go away leave
 * each other's work intact, and a gone connection's statements are freed.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { startWireRelay, type WireRelay } from "../../src/cluster/wire-relay.js";

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function relayed(): Promise<{ url: string; relay: WireRelay }> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "warrant-relay-"));
  const pglite = await PGlite.create({ dataDir });
  const socket = new PGLiteSocketServer({ db: pglite, host: "127.0.0.1", port: 0, maxConnections: 20 });
  await socket.start();
  const [host = "", port = ""] = socket.getServerConn().split(":");
  const relay = await startWireRelay({ host, port: Number(port) });
  cleanup = async () => {
    await relay.close();
    await socket.stop();
    await pglite.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  };
  return { url: `postgres://postgres@${relay.address}/postgres`, relay };
}

const named = (text: string, values: unknown[]) => ({ name: "same_name_everywhere", text, values });

describe("wire relay in front of PGlite", () => {
  it("keeps several connections' prepared statements and transactions apart", async () => {
    const { url } = await relayed();
    const setup = new pg.Client({ connectionString: url });
    await setup.connect();
    await setup.query("create table counter (id int primary key, n int not null)");
    await setup.query("insert into counter values (1, 0)");
    await setup.end();

    const pools = [0, 1, 2].map(() => new pg.Pool({ connectionString: url, max: 2 }));
    try {
      // Every connection prepares the same name; each increment is a read-then-write transaction.
      const increment = async (pool: pg.Pool) => {
        const client = await pool.connect();
        try {
          await client.query("begin");
          const { rows } = await client.query(named("select n from counter where id = $1", [1]));
          await new Promise((resolve) => setTimeout(resolve, 1));
          await client.query({
            name: "write_n",
            text: "update counter set n = $1 where id = 1",
            values: [rows[0].n + 1],
          });
          await client.query("commit");
        } finally {
          client.release();
        }
      };
      await Promise.all(pools.flatMap((pool) => Array.from({ length: 20 }, () => increment(pool))));
      const { rows } = await pools[0]!.query("select n from counter where id = 1");
      // A lost update would show fewer: the transactions ran one at a time.
      expect(rows[0].n).toBe(60);

      // A failed transaction on one connection does not abort another's.
      const failing = await pools[1]!.connect();
      await failing.query("begin");
      await expect(failing.query("insert into counter values (1, 0)")).rejects.toThrow(/duplicate key/);
      await failing.query("rollback");
      failing.release();
      expect((await pools[2]!.query(named("select n from counter where id = $1", [1]))).rows[0].n).toBe(60);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
    // Gone connections' statements are freed (and a client that left mid-transaction was rolled back).
    const leaving = new pg.Client({ connectionString: url });
    await leaving.connect();
    await leaving.query("begin");
    await leaving.query({ name: "left_behind", text: "update counter set n = 0 where id = 1", values: [] });
    await leaving.end();
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const prepared = await check.query("select name from pg_prepared_statements");
    expect(prepared.rows).toEqual([]);
    expect((await check.query("select n from counter where id = 1")).rows[0].n).toBe(60);
    await check.end();
  }, 240_000);
});
