/**
 * Users whose ids share a prefix (`bob`, `bob2`) through the API with
 * `@langchain/langgraph-sdk`: neither sees the other's items or namespaces by
 * any store route (get, search, list namespaces with and without a prefix,
 * suffix or depth, put over, delete), because the server's prefix for a user
 * is matched by whole labels, never as a string prefix.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { mintApiToken } from "../../src/auth/api-token.js";
import { findPrincipal, loadPrincipalDirectory } from "../../src/auth/principal.js";
import { REPO_ROOT } from "../../src/env.js";
import { createServerSandbox } from "./support/server-process.js";

let bob: Client;
let bob2: Client;

const fixture = useSandbox();
beforeAll(async () => {
  const sandbox = fixture.add(await createServerSandbox());
  // The dev directory plus bob2: the same role and scopes as bob, an id that starts with his.
  const devPath = path.join(REPO_ROOT, "src/domains/dev-principals.json");
  const dev = JSON.parse(await fs.readFile(devPath, "utf8")) as { principals: { user_id: string }[] };
  const bobEntry = dev.principals.find((entry) => entry.user_id === "bob");
  if (!bobEntry) throw new Error("no bob in the dev principals");
  const principalsPath = path.join(sandbox.dataDir, "principals-bob2.json");
  const withBob2 = { ...dev, principals: [...dev.principals, { ...bobEntry, user_id: "bob2", display_name: "Bob 2" }] };
  await fs.writeFile(principalsPath, JSON.stringify(withBob2));
  const server = await sandbox.start({ WARRANT_PRINCIPALS: principalsPath });
  const directory = await loadPrincipalDirectory(principalsPath);
  const secret = Uint8Array.from(Buffer.from(sandbox.env().WARRANT_AUTH_SECRET ?? "", "hex"));
  const clientOf = async (user: string) =>
    new Client({
      apiUrl: server.url,
      defaultHeaders: { Authorization: `Bearer ${await mintApiToken(secret, findPrincipal(directory, user))}` },
      callerOptions: { maxRetries: 0 },
    });
  bob = await clientOf("bob");
  bob2 = await clientOf("bob2");
}, 120_000);

describe("the store, users bob and bob2", () => {
  it("neither sees the other's items or namespaces by any route", async () => {
    await bob.store.putItem(["notes", "bob-only"], "plan", { owner: "bob", week: 1 });
    await bob2.store.putItem(["notes", "bob2-only"], "plan", { owner: "bob2", week: 1 });
    await bob2.store.putItem(["2", "notes"], "tail", { owner: "bob2" });

    for (const [self, own, other] of [
      [bob, "bob-only", "bob2-only"],
      [bob2, "bob2-only", "bob-only"],
    ] as const) {
      const owner = own === "bob-only" ? "bob" : "bob2";
      // Get: the other's namespace, named as they name it, is empty for this user.
      expect(await self.store.getItem(["notes", other], "plan")).toBeNull();
      expect((await self.store.getItem(["notes", own], "plan"))?.value).toEqual({ owner, week: 1 });
      // Search: from the root, a shared label, with a filter that both items match.
      const keys = async (prefix: string[], filter?: Record<string, unknown>) =>
        (await self.store.searchItems(prefix, filter ? { filter } : {})).items.map((item) => item.value["owner"]);
      for (const owners of [await keys([]), await keys(["notes"]), await keys([], { week: 1 })])
        expect(new Set(owners)).toEqual(new Set([owner]));
      expect(await keys(["notes", other])).toEqual([]);
      // Namespaces: every form of the listing holds this user's own only.
      const listed = (await self.store.listNamespaces()).namespaces;
      expect(listed).toEqual(
        owner === "bob"
          ? [["notes", "bob-only"]]
          : [
              ["2", "notes"],
              ["notes", "bob2-only"],
            ],
      );
      expect((await self.store.listNamespaces({ prefix: ["notes"] })).namespaces).toEqual([["notes", own]]);
      expect((await self.store.listNamespaces({ suffix: [other] })).namespaces).toEqual([]);
      expect((await self.store.listNamespaces({ maxDepth: 1 })).namespaces).toEqual(
        owner === "bob" ? [["notes"]] : [["2"], ["notes"]],
      );
    }

    // Put over and delete the other's: each acts on their own namespace; the other's item stays.
    await bob.store.putItem(["notes", "bob2-only"], "plan", { owner: "bob", week: 9 });
    await bob.store.deleteItem(["notes", "bob2-only"], "plan");
    await bob.store.deleteItem(["2", "notes"], "tail");
    expect((await bob2.store.getItem(["notes", "bob2-only"], "plan"))?.value).toEqual({ owner: "bob2", week: 1 });
    expect((await bob2.store.getItem(["2", "notes"], "tail"))?.value).toEqual({ owner: "bob2" });
    await bob2.store.deleteItem(["notes", "bob-only"], "plan");
    expect((await bob.store.getItem(["notes", "bob-only"], "plan"))?.value).toEqual({ owner: "bob", week: 1 });
  });
});
