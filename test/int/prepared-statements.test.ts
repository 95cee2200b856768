/**
 * The per-step statements are prepared (src/sql-prepared.ts) on both
 * backends. On the embedded PGlite every socket is one session, and `pg.Pool`
 * replaces its client after any failed query: the replacement must be able to
 * prepare the same statements again (database.ts clears the session's first).
 */
import { describe, expect, test } from "vitest";
import { backends, sampleLedgerRow, useBackend } from "./support/postgres.js";
import { uniqueThread } from "../support/threads.js";

const SLOW = { timeout: 120_000 };

describe.each(backends)("prepared statements on the $name backend", (backend) => {
  const current = useBackend(backend);

  test("a client that replaces a failed one prepares the same statements again", SLOW, async () => {
    const { ledger, pool } = current().database;
    const threadId = uniqueThread("prep");
    await ledger.begin(threadId, sampleLedgerRow("call-1", 1));
    for (let failure = 0; failure < 3; failure += 1) {
      // Any failed query makes pg.Pool destroy its client; the next one connects a new client.
      await expect(pool.query("select 1 / 0")).rejects.toMatchObject({ code: "22012" });
      await ledger.begin(threadId, sampleLedgerRow(`call-${failure + 2}`, 1));
    }
    const rows = await pool.query<{ call_id: string }>(
      "select call_id from warrant.ledger where thread_id = $1 order by call_id",
      [threadId],
    );
    expect(rows.rows.map((row) => row.call_id)).toEqual(["call-1", "call-2", "call-3", "call-4"]);
  });
});
