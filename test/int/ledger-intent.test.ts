/**
 * The folded intent write (`LedgerStore.beginFirst`): a call's first row and
 * its audit link in one statement, and nothing at all when the call already
 * has rows, so execute needs no read for a fresh call and still finds every
 * earlier attempt after a crash.
 */
import { beforeAll, describe, expect, test } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import type { RunStart } from "../../src/audit/chain.js";
import { openTestDatabase, sampleLedgerRow } from "./support/postgres.js";
import type { Database } from "../../src/stores/open-database.js";
import { uniqueThread } from "../support/threads.js";

describe("ledger intent rows", () => {
  let database: Database;
  const fixture = useSandbox();
  beforeAll(async () => {
    database = fixture.add(await openTestDatabase());
  }, 60_000);

  test("beginFirst writes a fresh call's row and link once, then refuses without writing", async () => {
    const threadId = uniqueThread();
    const run: RunStart = {
      thread_id: threadId,
      run_id: `run-${threadId}`,
      owner: "alice",
      request_sha256: "0".repeat(64),
      started_at: new Date().toISOString(),
    };
    const first = { ...sampleLedgerRow("call-a", 1), run_id: run.run_id, owner: "alice" };
    expect(await database.ledger.beginFirst(threadId, first, run)).toBe(true);
    await database.ledger.finish(
      threadId,
      "call-a",
      1,
      { status: "succeeded", error_code: null, finished_at: new Date().toISOString(), elapsed_ms: 3 },
      run,
    );
    // The call has a row: nothing is inserted, whatever attempt number is asked for.
    expect(await database.ledger.beginFirst(threadId, first, run)).toBe(false);
    expect(await database.ledger.beginFirst(threadId, { ...first, attempt: 2 }, run)).toBe(false);
    expect((await database.ledger.list(threadId)).map((row) => `${row.call_id}#${row.attempt}:${row.status}`)).toEqual([
      "call-a#1:succeeded",
    ]);
    // Another call of the same thread is fresh; without a run there is no link.
    expect(await database.ledger.beginFirst(threadId, sampleLedgerRow("call-b", 1))).toBe(true);
    const links = await database.pool.query(
      "select subject from warrant.audit_events where run_id = $1 and kind = 'ledger' order by seq",
      [run.run_id],
    );
    expect(links.rows.map((row: { subject: string }) => row.subject)).toEqual(["call-a/1#1", "call-a/1#2"]);
    const report = await database.verifyAudit(run.run_id);
    expect(report).toMatchObject({ breaks: [], events: 2, rows: 1 });
  });
});
