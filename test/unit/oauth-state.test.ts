import { describe, expect, it } from "vitest";
import { authorizationAsksOf, connectLines } from "../../src/cli/chat-output.js";
import { openState, sealState, stateKeyFrom } from "../../src/oauth/state.js";

const key = stateKeyFrom(new Uint8Array(32).fill(7));
const binding = { thread_id: "t-1", user_id: "alice", tenant: "uni", server: "tickets", expires_at: 2_000 };

describe("the sealed state of a per-user authorization", () => {
  it("opens to its binding before it expires, and is expired after", () => {
    const state = sealState(key, binding);
    expect(openState(key, state, 1_000)).toMatchObject({ ok: true, binding });
    expect(openState(key, state, 2_000)).toMatchObject({ ok: false, code: "expired_state" });
  });

  it("refuses another key, a changed body, a changed signature and malformed input as invalid_state", () => {
    const state = sealState(key, binding);
    const [body = "", signature = ""] = state.split(".");
    const moved = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body, "base64url").toString()), user_id: "bob" }),
    );
    const hostile: unknown[] = [
      sealState(stateKeyFrom(new Uint8Array(32).fill(8)), binding),
      `${moved.toString("base64url")}.${signature}`,
      `${body}.${signature.slice(0, -2)}AA`,
      `${body}`,
      "",
      "a.b.c",
      `${"A".repeat(5_000)}.AA`,
      "\u0000.\u0000",
      42,
      null,
      { state },
    ];
    for (const text of hostile) expect(openState(key, text, 1_000)).toMatchObject({ ok: false, code: "invalid_state" });
  });

  it("two seals of one binding differ (a nonce), so a state names one ask", () => {
    expect(sealState(key, binding)).not.toBe(sealState(key, binding));
  });
});

describe("the terminal's authorization pause", () => {
  it("reads the asks of an authorization_required interrupt and ignores other values", () => {
    const ask = {
      server: "tickets",
      authorization_url: "https://as.example/authorize?x=1",
      expires_at: "2026-12-02T15:00:00Z",
    };
    const asks = authorizationAsksOf([
      { action_requests: [] },
      { authorization_required: [ask, { server: 1 }] },
      null,
      "x",
    ]);
    expect(asks).toEqual([ask]);
    expect(connectLines(asks, "npm run chat -- --user alice --thread T")).toContain(
      `Connect tickets: ${ask.authorization_url}`,
    );
  });
});
