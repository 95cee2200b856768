/**
 * A per-user OAuth server's authorization (the owner's link, the callback) is passed through whatever revision the
 * connection speaks, pinned or negotiated, before it is open; servers without one offer neither.
 */
import { describe, expect, it } from "vitest";
import type { ServerConnection } from "../../src/mcp/connection.js";
import { negotiatedConnection, type OwnerAuthorization } from "../../src/mcp/negotiation.js";

const unopened = (): ServerConnection => {
  const never = () => Promise.reject(new Error("not opened in this test"));
  return { open: never, session: never, relist: never, probe: never, shutdown: async () => undefined };
};

describe("negotiatedConnection and an owner's authorization", () => {
  it.each([["2026-07-28" as const], ["2025-11-25" as const], [undefined]])("pin %s: passed through", async (pin) => {
    const completed: string[] = [];
    const owners: OwnerAuthorization = {
      authorizationFor: async (owner, state) => `https://as.example/authorize?owner=${owner}&state=${state}`,
      completeAuthorization: async (owner, code, state, iss) => void completed.push([owner, code, state, iss].join()),
    };
    const connection = negotiatedConnection(pin, unopened, unopened, owners);
    expect(await connection.authorizationFor?.("alice", "s1")).toBe(
      "https://as.example/authorize?owner=alice&state=s1",
    );
    await connection.completeAuthorization?.("alice", "c1", "s1", "https://as.example/");
    expect(completed).toEqual(["alice,c1,s1,https://as.example/"]);
  });

  it.each([["2026-07-28" as const], [undefined]])("pin %s without one: neither is offered", (pin) => {
    const connection = negotiatedConnection(pin, unopened, unopened);
    expect(connection.authorizationFor).toBeUndefined();
    expect(connection.completeAuthorization).toBeUndefined();
  });
});
