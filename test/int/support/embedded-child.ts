/**
 * Child process for the embedded crash test. Usage:
 *   node --import tsx embedded-child.ts <dataDir> <threadId>
 * Opens the embedded database, commits one ledger row and one checkpoint,
 * prints "ready", then idles until the parent SIGKILLs it (it never closes
 * the database, so nothing gets a clean shutdown).
 */
import { openDatabase } from "../../../src/stores/open-database.js";
import { compileCounterGraph, sampleLedgerRow } from "./postgres.js";

const [dataDir, threadId] = process.argv.slice(2);
if (dataDir === undefined || threadId === undefined) {
  process.stderr.write("usage: embedded-child.ts <dataDir> <threadId>\n");
  process.exit(2);
}

const database = await openDatabase({ dataDir });
await database.ledger.begin(threadId, sampleLedgerRow("call-crash", 1));
await compileCounterGraph(database.saver).invoke({ count: 0 }, { configurable: { thread_id: threadId } });
process.stdout.write("ready\n");
// Keep the event loop (and PGlite) alive until killed.
setInterval(() => undefined, 60_000);
