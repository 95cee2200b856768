/**
 * Which call a server's question belongs to, and the call's timeout while it
 * is open (src/elicitation/client.ts): no call or two calls in flight without
 * an async context → declined without asking; the one call in flight, or the
 * call whose async context the request arrived in, is asked; a server not
 * configured to elicit is refused; a timeout reaches the server as decline;
 * an answer that does not fit the form is never sent. The call's own timeout
 * is paused while a question is open (fake timers: no wall-clock assertion).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import {
  elicitableCall,
  elicitationHandler,
  type ElicitationAnswer,
  type ElicitationBroker,
  type ElicitationCall,
  type ElicitationQuestion,
} from "../../src/elicitation/client.js";

const principal = { user_id: "alice", tenant: "uni", scopes: [] } as unknown as Principal;
const call = (tool: string): ElicitationCall => ({ server: "booking", tool, threadId: "t-1", principal });
const PARAMS = {
  message: "Which day?",
  requestedSchema: {
    type: "object",
    properties: { date: { type: "string", format: "date" }, note: { type: "string", default: "none" } },
    required: ["date"],
  },
};

function broker(answer: ElicitationAnswer | (() => Promise<ElicitationAnswer>)) {
  const asked: ElicitationQuestion[] = [];
  const settled: string[] = [];
  const value: ElicitationBroker = {
    async ask(question) {
      asked.push(question);
      return typeof answer === "function" ? answer() : answer;
    },
    async settled(_question, outcome) {
      settled.push(outcome);
      return undefined;
    },
  };
  return { asked, settled, value };
}

const client = () => ({}) as Client;
const options = { timeout: 10_000 };

afterEach(() => {
  vi.useRealTimers();
});

describe("routing a question to its call", () => {
  it("declines without asking when no call is in flight", async () => {
    const fake = broker({ action: "accept", content: { date: "2026-12-24" } });
    const handle = elicitationHandler({ server: "booking", allowed: true, broker: fake.value, log: () => undefined });
    expect(await handle(client(), PARAMS, new AbortController().signal)).toEqual({ action: "decline" });
    expect(fake.asked).toEqual([]);
  });

  it("asks about the one call in flight and sends the answer with the defaults filled in", async () => {
    const fake = broker({ action: "accept", content: { date: "2026-12-24" } });
    const handle = elicitationHandler({ server: "booking", allowed: true, broker: fake.value, log: () => undefined });
    const mcp = client();
    const result = await elicitableCall(
      mcp,
      call("book"),
      options,
      () =>
        // Outside the call's async context, like a stdio server's message.
        new Promise((resolve) => setImmediate(() => resolve(handle(mcp, PARAMS, new AbortController().signal)))),
    );
    expect(result).toEqual({ action: "accept", content: { date: "2026-12-24", note: "none" } });
    expect(fake.asked.map((question) => question.call.tool)).toEqual(["book"]);
    expect(fake.asked[0]?.defaults).toEqual({ note: "none" });
    expect(fake.settled).toEqual(["accept"]);
  });

  it("with two calls in flight, only the async context decides; without one it declines", async () => {
    const fake = broker({ action: "decline" });
    const handle = elicitationHandler({ server: "booking", allowed: true, broker: fake.value, log: () => undefined });
    const mcp = client();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const background = elicitableCall(mcp, call("other"), options, () => held);
    const mine = elicitableCall(mcp, call("mine"), options, async () => {
      const result = await handle(mcp, PARAMS, new AbortController().signal);
      await held;
      return result;
    });
    // Both calls are in flight; this request comes from neither's async context (the test's own).
    await new Promise((resolve) => setImmediate(resolve));
    expect(await handle(mcp, PARAMS, new AbortController().signal)).toEqual({ action: "decline" });
    release();
    await background;
    expect(await mine).toEqual({ action: "decline" });
    expect(fake.asked.map((question) => question.call.tool)).toEqual(["mine"]);
  });

  it("refuses a server not configured to elicit, a hostile URL-mode request and a form that does not fit", async () => {
    const fake = broker({ action: "accept", content: { date: "2026-12-24" } });
    const mcp = client();
    const ask = (allowed: boolean, params: unknown) =>
      elicitableCall(mcp, call("book"), options, () =>
        elicitationHandler({ server: "booking", allowed, broker: fake.value, log: () => undefined })(
          mcp,
          params,
          new AbortController().signal,
        ),
      );
    expect(await ask(false, PARAMS)).toEqual({ action: "decline" });
    // A URL the host will not show: a typed error to the server, recorded as refused, no one asked.
    await expect(
      ask(true, { mode: "url", message: "Open", url: "javascript:alert(1)", elicitationId: "e-1" }),
    ).rejects.toMatchObject({ code: -32602, data: { code: "elicitation_url_refused" } });
    const badDefault = {
      message: "x",
      requestedSchema: { type: "object", properties: { n: { type: "integer", minimum: 5, default: 1 } } },
    };
    expect(await ask(true, badDefault)).toEqual({ action: "decline" });
    expect(fake.asked).toEqual([]);
    expect(fake.settled).toEqual(["refused", "refused", "refused"]);
  });

  it("a URL-mode question asks the owner with the checked URL; consent reaches the server with no content", async () => {
    const fake = broker({ action: "accept", content: { smuggled: "x" } });
    const completed: ElicitationQuestion[] = [];
    fake.value.completed = async (question) => void completed.push(question);
    const mcp = client();
    const handle = elicitationHandler({ server: "booking", allowed: true, broker: fake.value, log: () => undefined });
    const params = { mode: "url", message: "Connect", url: "https://Consent.Example.com/c?s=1", elicitationId: "e-7" };
    const result = await elicitableCall(mcp, call("book"), options, () =>
      handle(mcp, params, new AbortController().signal),
    );
    expect(result).toEqual({ action: "accept" });
    expect(fake.asked.map((question) => question.url)).toEqual([
      { url: "https://consent.example.com/c?s=1", host: "consent.example.com", serverId: "e-7" },
    ]);
    expect(fake.settled).toEqual(["accept"]);
    // The completion of an id the host never consented to changes nothing; the consented one is recorded once.
    await handle.complete?.({ elicitationId: "e-unknown" });
    await handle.complete?.({ elicitationId: "e-7" });
    await handle.complete?.({ elicitationId: "e-7" });
    expect(completed).toEqual([fake.asked[0]]);
  });

  it("a timeout reaches the server as decline; an answer that does not fit the form is never sent", async () => {
    const mcp = client();
    for (const [answer, outcome] of [
      [{ action: "timeout" }, "timeout"],
      [{ action: "accept", content: { date: "not a date" } }, "refused"],
    ] as const) {
      const fake = broker(answer);
      const handle = elicitationHandler({ server: "booking", allowed: true, broker: fake.value, log: () => undefined });
      const result = await elicitableCall(mcp, call("book"), options, () =>
        handle(mcp, PARAMS, new AbortController().signal),
      );
      expect(result).toEqual({ action: "decline" });
      expect(fake.settled).toEqual([outcome]);
    }
  });
});

describe("the call's timeout while a question is open", () => {
  it("is paused while the owner answers, then runs on", async () => {
    vi.useFakeTimers();
    let answer: (value: ElicitationAnswer) => void = () => undefined;
    const fake = broker(() => new Promise((resolve) => (answer = resolve)));
    const handle = elicitationHandler({ server: "booking", allowed: true, broker: fake.value, log: () => undefined });
    const mcp = client();
    let aborted: unknown;
    const result = elicitableCall(mcp, call("book"), { timeout: 100 }, async ({ signal }) => {
      signal.addEventListener("abort", () => (aborted = signal.reason));
      const elicited = await handle(mcp, PARAMS, new AbortController().signal);
      return elicited;
    });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(aborted).toBeUndefined();
    answer({ action: "decline" });
    expect(await result).toEqual({ action: "decline" });
  });

  it("still ends a call that takes too long without a question", async () => {
    vi.useFakeTimers();
    const mcp = client();
    const result = elicitableCall(mcp, call("book"), { timeout: 100 }, ({ signal }) => {
      return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    });
    const settled = result.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(150);
    expect(await settled).toMatchObject({ name: "TimeoutError" });
  });
});
