/**
 * The store behind the API (issue 26, item 1), through `@langchain/langgraph-sdk`'s
 * `Client.store` against `npm start` on real Postgres: every namespace is the
 * caller's own, so an item of alice's is invisible to bob by every route (get,
 * search, namespaces, put over it, delete it, naming the server's prefix), and
 * hostile bodies get typed 4xx answers, never a 500.
 */
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import type { Client } from "@langchain/langgraph-sdk";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";

let sandbox: ServerSandbox;
let server: ServerProcess;
let alice: Client;
let bob: Client;
let rita: Client;

const fixture = useSandbox();
beforeAll(async () => {
  sandbox = fixture.add(await createServerSandbox());
  server = await sandbox.start();
  alice = await sandbox.client(server, "alice");
  bob = await sandbox.client(server, "bob");
  rita = await sandbox.client(server, "rita");
}, 120_000);

async function raw(method: string, path: string, body: unknown, user = "alice") {
  const response = await sandbox.fetch(server, path, {
    method,
    user,
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as { error?: string; message?: string }) : {} };
}

describe("the store, per principal", () => {
  it("a store item of alice's is invisible to bob by every route", async () => {
    await alice.store.putItem(["memories", "study"], "plan", { text: "attention, week 1", week: 1 });
    const own = await alice.store.getItem(["memories", "study"], "plan");
    expect(own?.value).toEqual({ text: "attention, week 1", week: 1 });
    // The server's prefix is never shown: the namespace is the one alice named.
    expect(own?.namespace).toEqual(["memories", "study"]);

    // Get: bob's namespace of the same name is his own, and empty.
    expect(await bob.store.getItem(["memories", "study"], "plan")).toBeNull();
    // Naming the prefix the server uses for alice lands under bob's own prefix.
    expect(await bob.store.getItem(["tenants", "uni", "users", "alice", "memories", "study"], "plan")).toBeNull();
    expect(await bob.store.getItem(["users", "alice", "memories", "study"], "plan")).toBeNull();
    // A reviewer gets no wider view.
    expect(await rita.store.getItem(["memories", "study"], "plan")).toBeNull();

    // Search and namespaces: nothing of alice's, from the root or any prefix.
    expect((await bob.store.searchItems([])).items).toEqual([]);
    expect((await bob.store.searchItems(["memories"])).items).toEqual([]);
    expect((await bob.store.searchItems(["tenants", "uni", "users", "alice"])).items).toEqual([]);
    expect((await rita.store.searchItems([], { limit: 100 })).items).toEqual([]);
    expect((await bob.store.listNamespaces()).namespaces).toEqual([]);
    expect((await rita.store.listNamespaces({ prefix: ["tenants"] })).namespaces).toEqual([]);

    // Put over it and delete it: bob acts on his own namespace; alice's item stays as it was.
    await bob.store.putItem(["memories", "study"], "plan", { text: "bob's" });
    await bob.store.deleteItem(["memories", "study"], "plan");
    await bob.store.deleteItem(["tenants", "uni", "users", "alice", "memories", "study"], "plan");
    expect((await alice.store.getItem(["memories", "study"], "plan"))?.value).toEqual({
      text: "attention, week 1",
      week: 1,
    });

    // Alice's own routes see her item, prefix-free.
    const found = await alice.store.searchItems(["memories"], { filter: { week: 1 } });
    expect(found.items.map((item) => [item.namespace, item.key])).toEqual([[["memories", "study"], "plan"]]);
    expect((await alice.store.searchItems(["memories"], { filter: { week: 2 } })).items).toEqual([]);
    expect((await alice.store.listNamespaces()).namespaces).toEqual([["memories", "study"]]);
    expect((await alice.store.listNamespaces({ maxDepth: 1 })).namespaces).toEqual([["memories"]]);
    // A label that only starts like alice's is another namespace (whole labels, not LIKE prefixes).
    await alice.store.putItem(["memoriesx"], "other", { n: 1 });
    expect((await alice.store.searchItems(["memories"])).items.map((item) => item.key)).toEqual(["plan"]);

    // Stored under the server's prefix for alice, in the PostgresStore table shape.
    const client = new pg.Client({ connectionString: sandbox.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ namespace_path: string }>(
        "select namespace_path from warrant.store where key = 'plan' order by namespace_path",
      );
      expect(rows.map((row) => row.namespace_path)).toEqual(["tenants:uni:users:alice:memories:study"]);
    } finally {
      await client.end();
    }

    await alice.store.deleteItem(["memories", "study"], "plan");
    expect(await alice.store.getItem(["memories", "study"], "plan")).toBeNull();
  });

  it("refuses hostile and unsupported store bodies with typed 4xx answers", async () => {
    const cases: [string, string, string, unknown, number, string][] = [
      ["NUL in a key", "PUT", "/store/items", { namespace: ["a"], key: "k\u0000", value: {} }, 422, "invalid_request"],
      [
        "lone surrogate in a label",
        "PUT",
        "/store/items",
        { namespace: ["a\ud800"], key: "k", value: {} },
        422,
        "invalid_request",
      ],
      [
        "lone surrogate in a value",
        "PUT",
        "/store/items",
        { namespace: ["a"], key: "k", value: { t: "\udc00" } },
        422,
        "invalid_request",
      ],
      [
        "NUL in a value key",
        "PUT",
        "/store/items",
        { namespace: ["a"], key: "k", value: { "a\u0000": 1 } },
        422,
        "invalid_request",
      ],
      [
        "a period in a label",
        "PUT",
        "/store/items",
        { namespace: ["a.b"], key: "k", value: {} },
        422,
        "invalid_request",
      ],
      [
        "a colon in a label",
        "PUT",
        "/store/items",
        { namespace: ["a:b"], key: "k", value: {} },
        422,
        "invalid_request",
      ],
      ["an empty label", "PUT", "/store/items", { namespace: [""], key: "k", value: {} }, 422, "invalid_request"],
      [
        "a control character in a label",
        "PUT",
        "/store/items",
        { namespace: ["a\u0007"], key: "k", value: {} },
        422,
        "invalid_request",
      ],
      ["no namespace", "PUT", "/store/items", { namespace: [], key: "k", value: {} }, 422, "invalid_request"],
      [
        "a namespace that is not an array",
        "PUT",
        "/store/items",
        { namespace: "a", key: "k", value: {} },
        422,
        "invalid_request",
      ],
      [
        "a label that is not a string",
        "PUT",
        "/store/items",
        { namespace: [{ a: 1 }], key: "k", value: {} },
        422,
        "invalid_request",
      ],
      [
        "too many labels",
        "PUT",
        "/store/items",
        { namespace: Array(9).fill("a"), key: "k", value: {} },
        422,
        "invalid_request",
      ],
      [
        "a long label",
        "PUT",
        "/store/items",
        { namespace: ["a".repeat(129)], key: "k", value: {} },
        422,
        "invalid_request",
      ],
      [
        "a long key",
        "PUT",
        "/store/items",
        { namespace: ["a"], key: "k".repeat(257), value: {} },
        422,
        "invalid_request",
      ],
      [
        "a key that is not a string",
        "PUT",
        "/store/items",
        { namespace: ["a"], key: 7, value: {} },
        422,
        "invalid_request",
      ],
      [
        "a value that is not an object",
        "PUT",
        "/store/items",
        { namespace: ["a"], key: "k", value: [1] },
        422,
        "invalid_request",
      ],
      ["a null value", "PUT", "/store/items", { namespace: ["a"], key: "k", value: null }, 422, "invalid_request"],
      [
        "a deep value",
        "PUT",
        "/store/items",
        { namespace: ["a"], key: "k", value: nested(40) },
        422,
        "invalid_request",
      ],
      [
        "a large value",
        "PUT",
        "/store/items",
        { namespace: ["a"], key: "k", value: { t: "x".repeat(70_000) } },
        422,
        "invalid_request",
      ],
      [
        "an unknown key",
        "PUT",
        "/store/items",
        { namespace: ["a"], key: "k", value: {}, owner: "bob" },
        422,
        "invalid_request",
      ],
      ["a ttl", "PUT", "/store/items", { namespace: ["a"], key: "k", value: {}, ttl: 5 }, 422, "unsupported"],
      [
        "a vector index",
        "PUT",
        "/store/items",
        { namespace: ["a"], key: "k", value: {}, index: ["text"] },
        422,
        "unsupported",
      ],
      ["a body that is not JSON", "PUT", "/store/items", "{", 400, "invalid_json"],
      ["a body that is an array", "PUT", "/store/items", [1], 422, "invalid_request"],
      [
        "a semantic query",
        "POST",
        "/store/items/search",
        { namespace_prefix: [], query: "attention" },
        422,
        "unsupported",
      ],
      [
        "a filter operator",
        "POST",
        "/store/items/search",
        { namespace_prefix: [], filter: { week: { $gt: 1 } } },
        422,
        "invalid_request",
      ],
      [
        "a top-level filter operator",
        "POST",
        "/store/items/search",
        { namespace_prefix: [], filter: { $or: [] } },
        422,
        "invalid_request",
      ],
      [
        "a limit out of range",
        "POST",
        "/store/items/search",
        { namespace_prefix: [], limit: 10_000 },
        422,
        "invalid_request",
      ],
      [
        "a limit that is not a number",
        "POST",
        "/store/items/search",
        { namespace_prefix: [], limit: "5" },
        422,
        "invalid_request",
      ],
      [
        "a NUL in a search prefix",
        "POST",
        "/store/items/search",
        { namespace_prefix: ["\u0000"] },
        422,
        "invalid_request",
      ],
      ["a prefix that is not an array", "POST", "/store/namespaces", { prefix: "a" }, 422, "invalid_request"],
      ["a wildcard prefix", "POST", "/store/namespaces", { prefix: ["*"] }, 422, "invalid_request"],
      ["a max_depth out of range", "POST", "/store/namespaces", { max_depth: -1 }, 422, "invalid_request"],
      ["a delete without a key", "DELETE", "/store/items", { namespace: ["a"] }, 422, "invalid_request"],
    ];
    for (const [name, method, path, body, status, code] of cases) {
      const answer = await raw(method, path, body);
      expect([name, answer.status, answer.body.error]).toEqual([name, status, code]);
    }
    const queries: [string, string, number, string][] = [
      ["no key", "/store/items?namespace=a", 422, "invalid_request"],
      ["an unknown parameter", "/store/items?namespace=a&key=k&owner=bob", 422, "invalid_request"],
      ["a NUL in the key", "/store/items?namespace=a&key=%00", 422, "invalid_request"],
      ["a NUL in the namespace", "/store/items?namespace=a%00&key=k", 422, "invalid_request"],
      ["an empty label", "/store/items?namespace=a..b&key=k", 422, "invalid_request"],
    ];
    for (const [name, path, status, code] of queries) {
      const answer = await raw("GET", path, undefined);
      expect([name, answer.status, answer.body.error]).toEqual([name, status, code]);
    }
    // Nothing was written by any of them.
    expect((await alice.store.searchItems(["a"])).items).toEqual([]);
    expect(server.stderr()).not.toContain("unexpected error");
  });
});

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let index = 0; index < depth; index += 1) value = { inner: value };
  return value;
}
