/**
 * src/metrics.ts: counters land in the snapshot by template, the render sums
 * (or, for lag, takes the largest of) the workers' series and repeats each
 * with its `worker` label, label values are escaped, and a snapshot sent over
 * IPC is checked before it is used.
 */
import { describe, expect, it } from "vitest";
import { countRequest, countToolCall, isSnapshot, renderMetrics, takeSnapshot } from "../../src/metrics.js";

describe("metrics", () => {
  it("counts requests by method, route template and status, and tool calls by outcome", () => {
    countRequest("GET", "/threads/:thread_id", 200);
    countRequest("GET", "/threads/:thread_id", 200);
    countToolCall("succeeded");
    countToolCall("failed");
    countToolCall("denied");
    countToolCall("running");
    const snapshot = takeSnapshot();
    expect(snapshot['warrant_http_requests_total{method="GET",route="/threads/:thread_id",status="200"}']).toBe(2);
    expect(snapshot['warrant_tool_calls_total{outcome="executed"}']).toBe(2);
    expect(snapshot['warrant_tool_calls_total{outcome="denied"}']).toBe(1);
    expect(snapshot["warrant_tool_steps_total"]).toBe(3);
    expect(snapshot["process_cpu_seconds_total"]).toBeGreaterThan(0);
  });

  it("sums counters, takes the largest lag, and labels each worker's series", () => {
    const text = renderMetrics(
      new Map([
        ["1", { 'warrant_runs_ended_total{status="success"}': 3, nodejs_eventloop_lag_seconds: 0.5 }],
        ["2", { 'warrant_runs_ended_total{status="success"}': 4, nodejs_eventloop_lag_seconds: 0.25 }],
      ]),
      { warrant_worker_restarts_total: 1 },
    );
    const lines = text.trim().split("\n");
    expect(lines).toContain('warrant_runs_ended_total{status="success"} 7');
    expect(lines).toContain('warrant_runs_ended_total{status="success",worker="1"} 3');
    expect(lines).toContain('warrant_runs_ended_total{status="success",worker="2"} 4');
    expect(lines).toContain("nodejs_eventloop_lag_seconds 0.5");
    expect(lines).toContain('nodejs_eventloop_lag_seconds{worker="2"} 0.25');
    expect(lines).toContain("warrant_worker_restarts_total 1");
    expect(lines).toContain("warrant_workers_reporting 2");
    expect(lines).toContain("# TYPE warrant_runs_ended_total counter");
    // Series of no known family are not rendered.
    expect(renderMetrics(new Map([["1", { unknown_series: 1 }]]))).not.toContain("unknown_series");
  });

  it("escapes label values", () => {
    countRequest('GET"\n\\', "/x", 404);
    const keys = Object.keys(takeSnapshot()).filter((key) => key.includes('route="/x"'));
    expect(keys).toEqual(['warrant_http_requests_total{method="GET\\"\\n\\\\",route="/x",status="404"}']);
  });

  it("accepts only records of finite numbers as snapshots", () => {
    expect(isSnapshot({ a: 1 })).toBe(true);
    for (const hostile of [null, 1, "x", { a: "1" }, { a: Number.NaN }, { a: Number.POSITIVE_INFINITY }, { a: {} }])
      expect(isSnapshot(hostile)).toBe(false);
  });
});
