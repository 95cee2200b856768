/** The retry policy's classification (src/db/retry.ts): what is transient, what may be sent again. */
import { describe, expect, it } from "vitest";
import { databaseFailure, IDEMPOTENT, repeatable, transience, retryTransient } from "../../src/db/retry.js";

const pgError = (code: string, message = "terminating connection due to administrator command") =>
  Object.assign(new Error(message), { code, severity: "FATAL" });

describe("transience", () => {
  it("names server aborts as rolled back and lost connections as unknown", () => {
    for (const code of ["40001", "40P01", "57P01", "57P02", "57P03"])
      expect(transience(pgError(code))).toBe("rolled_back");
    for (const code of ["08000", "08003", "08006", "ECONNRESET", "ECONNREFUSED", "EPIPE"])
      expect(transience(pgError(code))).toBe("connection_lost");
    expect(transience(new Error("Connection terminated unexpectedly"))).toBe("connection_lost");
    expect(transience(pgError("23505", "duplicate key"))).toBeUndefined();
    expect(transience(new Error("boom"))).toBeUndefined();
  });

  it("repeats reads and marked writes only", () => {
    expect(repeatable("select 1")).toBe(true);
    expect(repeatable("with a as (select 1) select * from a")).toBe(true);
    expect(repeatable("with a as (insert into t values (1) returning *) select * from a")).toBe(false);
    expect(repeatable("select * from t for update")).toBe(false);
    expect(repeatable("update t set x = 1")).toBe(false);
    expect(repeatable(`${IDEMPOTENT}update t set x = 1`)).toBe(true);
  });

  it.each([
    ["UPDATE", "update t set x = 1 where id = $1"],
    ["UPDATE (upper case, leading space)", "  UPDATE t SET x = 1"],
    ["INSERT … ON CONFLICT", "insert into t (id) values ($1) on conflict (id) do update set x = excluded.x"],
    ["DELETE", "delete from t where id = $1"],
    ["MERGE", "merge into t using s on t.id = s.id when matched then update set x = s.x"],
    ["nextval", "select nextval('t_id_seq')"],
    ["FOR SHARE", "select * from t where id = $1 for share"],
    ["FOR UPDATE", "select * from t where id = $1 for update skip locked"],
    ["FOR NO KEY UPDATE", "select * from t where id = $1 for no key update"],
    ["FOR KEY SHARE", "select * from t where id = $1 for key share"],
    ["a CTE that updates", "with moved as (update t set x = 1 returning id) select id from moved"],
    ["a CTE that deletes", "with gone as (delete from t returning id) select count(*) from gone"],
    ["a CTE that inserts", "with added as (insert into t (id) values (1) returning id) select * from added"],
    ["setval", "select setval('t_id_seq', 10)"],
    ["a CTE then a writing statement", "with a as (select 1 as id) update t set x = 1 from a where t.id = a.id"],
  ])("never repeats a writing statement after a lost connection: %s", (_shape, text) => {
    expect(repeatable(text)).toBe(false);
  });
});

describe("retryTransient", () => {
  it("retries what is safe, gives up typed after the budget, and passes other errors through", async () => {
    let calls = 0;
    const flaky = async () => {
      calls += 1;
      if (calls < 3) throw pgError("57P01");
      return "ok";
    };
    expect(await retryTransient(flaky, () => true, { budgetMs: 5_000, baseDelayMs: 1, maxDelayMs: 5 })).toBe("ok");
    expect(calls).toBe(3);

    const down = retryTransient(
      () => Promise.reject(pgError("08006")),
      () => true,
      {
        budgetMs: 50,
        baseDelayMs: 5,
        maxDelayMs: 10,
      },
    );
    await expect(down).rejects.toMatchObject({ code: "database_unavailable" });
    await expect(down).rejects.not.toThrow(/terminating/);

    let once = 0;
    const unsafe = retryTransient(
      async () => {
        once += 1;
        throw pgError("08006");
      },
      (kind) => kind === "rolled_back",
    );
    await expect(unsafe).rejects.toMatchObject({ code: "database_unavailable" });
    expect(once).toBe(1);
    await expect(
      retryTransient(
        () => Promise.reject(pgError("23505", "dup")),
        () => true,
      ),
    ).rejects.toMatchObject({
      code: "23505",
    });
  });

  it("reports a run's database failure typed, without the server's text", () => {
    expect(databaseFailure(pgError("57P01"))).toMatchObject({ error: "database_unavailable" });
    const other = databaseFailure(pgError("23505", 'duplicate key value violates unique constraint "runs_pkey"'));
    expect(other).toEqual({ error: "database_error", message: "a database statement failed" });
    expect(databaseFailure(new Error("tool broke"))).toBeUndefined();
  });
});
