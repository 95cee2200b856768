/**
 * LangChain's checkpointer conformance suite
 * (`@langchain/langgraph-checkpoint-validation`: put, putWrites, getTuple,
 * list, deleteThread, and the opt-in getDeltaChannelHistory specs) against
 * Warrant's saver as `openDatabase` builds it (prepared statements, the
 * write-ahead unit attached), and against the stock `PostgresSaver` as the
 * control, each in a scratch database of its own on the Postgres server.
 *
 * The package's spec functions call vitest's functions as globals (its own
 * CLI runs vitest with `globals: true`); this file hands them the ones it
 * imports and then loads the specs, so the suite runs inside `npm test`
 * without turning globals on for every other file.
 */
import * as vitest from "vitest";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import pg from "pg";
import { WarrantSaver } from "../../src/checkpoint/checkpointer.js";
import { setUpCheckpointTables, TABLES } from "../../src/checkpoint/checkpoint-tables.js";
import { WriteAhead } from "../../src/checkpoint/write-ahead.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";

const { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test } = vitest;
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test });
const { deltaChannelHistoryTests, specTest } = await import("@langchain/langgraph-checkpoint-validation");

type Initializer<T extends BaseCheckpointSaver> = Parameters<typeof specTest<T>>[0];

/** A saver under test: how its tables are set up (once), how one is built, how one is released. */
interface Subject<T extends BaseCheckpointSaver> {
  name: string;
  setUp(pool: pg.Pool): Promise<void>;
  make(pool: pg.Pool): T;
  release(saver: T): Promise<void>;
}

/**
 * An initializer over a scratch database of its own: every saver starts on
 * empty tables (the suite's `list` specs read every thread), and is released
 * (its held saves written) before the next one starts.
 */
function onScratchDatabase<T extends BaseCheckpointSaver>(subject: Subject<T>): Initializer<T> {
  let scratch: TestDatabase | undefined;
  let pool: pg.Pool | undefined;
  const open = () => {
    if (!pool) throw new Error("the scratch database is not open");
    return pool;
  };
  return {
    checkpointerName: subject.name,
    beforeAllTimeout: 60_000,
    async beforeAll() {
      scratch = await createTestDatabase();
      pool = new pg.Pool({ connectionString: scratch.url, max: 4 });
      await subject.setUp(pool);
    },
    async afterAll() {
      await pool?.end();
      await scratch?.drop();
    },
    async createCheckpointer() {
      await open().query(`truncate ${TABLES.checkpoints}, ${TABLES.blobs}, ${TABLES.writes}`);
      return subject.make(open());
    },
    destroyCheckpointer: (saver) => subject.release(saver),
  };
}

const warrant: Subject<WarrantSaver> = {
  name: "WarrantSaver",
  async setUp(pool) {
    const client = await pool.connect();
    try {
      await setUpCheckpointTables(client);
    } finally {
      client.release();
    }
  },
  make(pool) {
    // As openDatabase builds it: prepared statements, the write-ahead unit attached.
    const saver = new WarrantSaver(pool, undefined, { namedStatements: true });
    new WriteAhead(saver);
    return saver;
  },
  release: (saver) => saver.close(),
};

const control: Subject<PostgresSaver> = {
  name: "PostgresSaver",
  setUp: (pool) => new PostgresSaver(pool).setup(),
  make: (pool) => new PostgresSaver(pool),
  release: async () => undefined,
};

for (const subject of [warrant, control] as Subject<BaseCheckpointSaver>[]) {
  specTest(onScratchDatabase(subject));
  // Opt-in in the package (the method is beta); WarrantSaver answers it with its own query, so it is held to it too.
  describe(`${subject.name} (delta channel history)`, () => {
    const initializer = onScratchDatabase(subject);
    beforeAll(() => initializer.beforeAll?.(), 60_000);
    afterAll(() => initializer.afterAll?.());
    deltaChannelHistoryTests(initializer);
  });
}
