/**
 * Server health without I/O: the reconnect delay (exponential, capped,
 * equal jitter) and the supervisor's states, driven by fake timers and a
 * scripted connect/probe.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isConfigError } from "../../src/errors.js";
import { reconnectDelayMs, supervise, type HealthEvent } from "../../src/mcp/health.js";
import { parseConfig } from "../../src/policy/config.js";

const POLICY = { base_ms: 200, max_ms: 10_000 };

describe("reconnectDelayMs", () => {
  it("doubles from base_ms up to max_ms, with half of each delay fixed and half random", () => {
    expect([1, 2, 3, 4].map((attempt) => reconnectDelayMs(attempt, POLICY, () => 0))).toEqual([100, 200, 400, 800]);
    expect([1, 2, 3, 4].map((attempt) => reconnectDelayMs(attempt, POLICY, () => 1))).toEqual([200, 400, 800, 1_600]);
    expect(reconnectDelayMs(7, POLICY, () => 1)).toBe(10_000);
    expect(reconnectDelayMs(60, POLICY, () => 0.5)).toBe(7_500);
    // Attempt numbers below 1 are treated as the first attempt.
    expect(reconnectDelayMs(0, POLICY, () => 0)).toBe(100);
  });
});

describe("supervise", () => {
  let events: HealthEvent[];
  beforeEach(() => {
    vi.useFakeTimers();
    events = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function supervisor(outcomes: ("ok" | "fail")[], probe: () => Promise<void> = async () => undefined) {
    const connect = vi.fn(async () => {
      const next = outcomes.shift() ?? "ok";
      if (next === "fail") throw new Error("connect refused\nstack line");
    });
    const supervised = supervise({
      server: "s",
      policy: POLICY,
      connect,
      probe,
      onEvent: (event) => events.push(event),
      random: () => 0,
    });
    return { supervised, connect };
  }

  it("starts healthy, goes unhealthy on markDown, retries with growing delays and comes back", async () => {
    const { supervised, connect } = supervisor(["ok", "fail", "fail", "ok"]);
    await supervised.start();
    expect(supervised.healthy).toBe(true);

    supervised.markDown("the server process exited");
    supervised.markDown("a second report of the same outage");
    expect(supervised.healthy).toBe(false);
    await vi.advanceTimersByTimeAsync(99);
    expect(connect).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(connect).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(200);
    expect(connect).toHaveBeenCalledTimes(3);
    expect(supervised.healthy).toBe(false);
    await vi.advanceTimersByTimeAsync(400);
    expect(connect).toHaveBeenCalledTimes(4);
    expect(supervised.healthy).toBe(true);

    expect(events).toEqual([
      { server: "s", type: "healthy", attempt: 0 },
      { server: "s", type: "unhealthy", reason: "the server process exited" },
      { server: "s", type: "reconnect_scheduled", attempt: 1, delay_ms: 100 },
      { server: "s", type: "reconnect_failed", attempt: 1, reason: "connect refused" },
      { server: "s", type: "reconnect_scheduled", attempt: 2, delay_ms: 200 },
      { server: "s", type: "reconnect_failed", attempt: 2, reason: "connect refused" },
      { server: "s", type: "reconnect_scheduled", attempt: 3, delay_ms: 400 },
      { server: "s", type: "healthy", attempt: 3 },
    ]);
    await supervised.close();
  });

  it("rejects a failed start and stays unhealthy until the caller decides", async () => {
    const { supervised, connect } = supervisor(["fail", "ok"]);
    await expect(supervised.start()).rejects.toThrow("connect refused");
    expect(supervised.healthy).toBe(false);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(connect).toHaveBeenCalledTimes(1);
    // An optional server: the host marks it down, and the retry loop begins.
    supervised.markDown("start-up failed");
    await vi.advanceTimersByTimeAsync(100);
    expect(supervised.healthy).toBe(true);
    await supervised.close();
  });

  it("probes on suspicion and marks down only when the probe fails", async () => {
    let alive = true;
    const { supervised } = supervisor(["ok"], async () => {
      if (!alive) throw new Error("ECONNREFUSED");
    });
    await supervised.start();
    supervised.suspect("stream error");
    await vi.advanceTimersByTimeAsync(0);
    expect(supervised.healthy).toBe(true);
    alive = false;
    supervised.suspect("stream error");
    await vi.advanceTimersByTimeAsync(0);
    expect(supervised.healthy).toBe(false);
    expect(events).toContainEqual({
      server: "s",
      type: "unhealthy",
      reason: "stream error; probe failed: ECONNREFUSED",
    });
    await supervised.close();
  });

  it("stops retrying once closed", async () => {
    const { supervised, connect } = supervisor(["ok", "fail", "fail", "fail"]);
    await supervised.start();
    supervised.markDown("gone");
    await vi.advanceTimersByTimeAsync(100);
    expect(connect).toHaveBeenCalledTimes(2);
    await supervised.close();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(connect).toHaveBeenCalledTimes(2);
    expect(supervised.healthy).toBe(false);
    supervised.markDown("after close");
    expect(events.filter((event) => event.type === "unhealthy")).toHaveLength(1);
  });
});

describe("server health settings in the config", () => {
  const notes = { transport: "stdio", command: "node", args: ["server.js"] };
  const parse = (server: Record<string, unknown>) =>
    parseConfig(JSON.stringify({ servers: { notes: server }, tools: {} }));

  it("defaults to a required server with 200 ms to 10 s backoff", () => {
    expect(parse(notes).servers["notes"]).toMatchObject({
      optional: false,
      reconnect: { base_ms: 200, max_ms: 10_000 },
    });
    expect(parse({ ...notes, optional: true, reconnect: { base_ms: 50 } }).servers["notes"]).toMatchObject({
      optional: true,
      reconnect: { base_ms: 50, max_ms: 10_000 },
    });
  });

  it.each([
    ["a cap below the base", { reconnect: { base_ms: 500, max_ms: 100 } }],
    ["an unknown reconnect key", { reconnect: { base_ms: 500, jitter: 0 } }],
    ["a non-boolean optional", { optional: "yes" }],
  ])("refuses %s", (_label, extra) => {
    let error: unknown;
    try {
      parse({ ...notes, ...extra });
    } catch (caught) {
      error = caught;
    }
    expect(isConfigError(error) && error.code).toBe("config_invalid");
  });
});
