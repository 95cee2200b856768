/**
 * The store inside a graph (issue 26, item 1): a node's `config.store` is the
 * run owner's view, given to the run the way the run manager gives it
 * (`graph.stream(input, { store })`, src/server/runs/execution.ts). What a node writes is
 * under the owner's prefix in Postgres; another owner's view of the same
 * namespace is empty, and a node cannot reach past its owner's prefix.
 */
import os from "node:os";
import { Annotation, END, type LangGraphRunnableConfig, START, StateGraph } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "../../src/stores/open-database.js";
import { createItemTable } from "../../src/stores/store-item-table.js";
import { PrincipalStore } from "../../src/stores/principal-item-store.js";
import { createTestDatabase, type TestDatabase } from "./support/postgres.js";

let test: TestDatabase | undefined;
let database: Database | undefined;
afterEach(async () => {
  await database?.close();
  database = undefined;
  await test?.drop();
  test = undefined;
});

const State = Annotation.Root({ seen: Annotation<string[]>() });

/** A graph whose node remembers a note in the store and reads back what its owner can see. */
function memoryGraph() {
  return new StateGraph(State)
    .addNode("remember", async (_state, config: LangGraphRunnableConfig) => {
      const store = config.store;
      if (!store) throw new Error("no store");
      await store.put(["memories"], "note", { text: "attention" });
      const items = await store.search([]);
      // Naming the server's prefix for another user stays inside this owner's namespace.
      const other = await store.get(["tenants", "uni", "users", "bob", "memories"], "note");
      return { seen: [...items.map((item) => `${item.namespace.join("/")}:${item.key}`), `other:${other === null}`] };
    })
    .addEdge(START, "remember")
    .addEdge("remember", END)
    .compile();
}

describe("config.store in a graph", () => {
  it("is the owner's view: a node's writes are under the owner's prefix and invisible to another owner", async () => {
    test = await createTestDatabase();
    database = await openDatabase({ databaseUrl: test.url, dataDir: os.tmpdir() });
    const table = createItemTable(database.pool, database.schema);
    const alice = new PrincipalStore(table, { tenant: "uni", user_id: "alice" });
    const bob = new PrincipalStore(table, { tenant: "uni", user_id: "bob" });

    const result = await memoryGraph().invoke({ seen: [] }, { store: alice });
    expect(result.seen).toEqual(["memories:note", "other:true"]);

    expect((await alice.get(["memories"], "note"))?.value).toEqual({ text: "attention" });
    expect(await bob.get(["memories"], "note")).toBeNull();
    expect(await bob.search([])).toEqual([]);
    const { rows } = await database.pool.query<{ namespace_path: string }>(
      `select namespace_path from "${database.schema}".store order by namespace_path`,
    );
    expect(rows.map((row) => row.namespace_path)).toEqual(["tenants:uni:users:alice:memories"]);

    // Bob's run writes his own item; alice's is unchanged.
    await memoryGraph().invoke({ seen: [] }, { store: bob });
    expect((await alice.search([])).map((item) => item.key)).toEqual(["note"]);
    expect((await bob.search([])).map((item) => item.namespace)).toEqual([["memories"]]);
  });

  it("refuses a node's unstorable input with a typed error instead of a database failure", async () => {
    test = await createTestDatabase();
    database = await openDatabase({ databaseUrl: test.url, dataDir: os.tmpdir() });
    const alice = new PrincipalStore(createItemTable(database.pool, database.schema), {
      tenant: "uni",
      user_id: "alice",
    });
    await expect(alice.put(["memories"], "k\u0000", { a: 1 })).rejects.toMatchObject({ name: "StoreInputError" });
    await expect(alice.put(["memories"], "k", { a: "\ud800" })).rejects.toMatchObject({ name: "StoreInputError" });
    await expect(alice.search([], { query: "semantic" })).rejects.toMatchObject({ name: "StoreInputError" });
    await expect(alice.put(["memories"], "k", { a: 1 }, ["a"])).rejects.toMatchObject({ name: "StoreInputError" });
  });
});
