/**
 * GET /metrics (issue 45): a real `npm start` with two workers on a Postgres
 * server. Requests land on both workers; the scrape, whichever worker serves
 * it, has every series summed over the workers and each worker's own with a
 * `worker="N"` label, route templates (never a thread id), the primary's
 * restart counter and the database-wide reviews gauge. It takes an operator
 * token: none, a user's API token and malformed headers are 401
 * `token_invalid`, never a 500.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintOperatorToken } from "../../src/auth/operator-token.js";
import { REPO_ROOT } from "../../src/env.js";
import { loadConfig } from "../../src/policy/config.js";
import { createServerSandbox, spawnServer, type ServerProcess, type ServerSandbox } from "./support/server-process.js";

/** Two workers' starts, one after another, each with its MCP server, on a loaded machine. */
const START_LIMIT_MS = 400_000;

let sandbox: ServerSandbox;
let server: ServerProcess;
let operator: string;
/** The scraper's long-lived secret (`WARRANT_METRICS_TOKEN`). */
const SCRAPER = `scrape-${"k".repeat(40)}`;

beforeAll(async () => {
  sandbox = await createServerSandbox();
  const env = sandbox.env({ WARRANT_WORKERS: "2", WARRANT_METRICS_TOKEN: SCRAPER });
  // The calendar server alone: two workers' sets of all four MCP servers miss their start timeout on a loaded machine.
  const shipped = await loadConfig(path.join(REPO_ROOT, "warrant.config.json"));
  const tools = Object.fromEntries(Object.entries(shipped.tools).filter(([, tool]) => tool.server === "calendar"));
  env["WARRANT_CONFIG"] = path.join(sandbox.dataDir, "calendar-only.config.json");
  await fs.writeFile(
    env["WARRANT_CONFIG"],
    JSON.stringify({ ...shipped, servers: { calendar: shipped.servers["calendar"] }, tools }),
  );
  server = await spawnServer(env, START_LIMIT_MS);
  operator = await mintOperatorToken(Uint8Array.from(Buffer.from(env["WARRANT_AUTH_SECRET"]!, "hex")));
}, START_LIMIT_MS + 30_000);

afterAll(async () => {
  await server?.kill();
  await sandbox?.cleanup();
}, 120_000);

const scrape = (authorization?: string) =>
  fetch(`${server.url}/metrics`, authorization === undefined ? {} : { headers: { Authorization: authorization } });

/** `series value` lines of a scrape, by series. */
function parse(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return values;
}

const CREATED = 'warrant_http_requests_total{method="POST",route="/threads",status="200"}';
const perWorker = (series: string, worker: number) =>
  series.endsWith("}") ? `${series.slice(0, -1)},worker="${worker}"}` : `${series}{worker="${worker}"}`;

describe("GET /metrics with two workers", () => {
  it("sums every worker's series and lists each worker's with its label", async () => {
    const client = await sandbox.client(server, "alice");
    // Many short requests on fresh connections: the primary hands connections to both workers.
    const threads = await Promise.all(Array.from({ length: 20 }, () => client.threads.create()));
    await Promise.all(threads.map((thread) => client.threads.get(thread.thread_id)));
    const response = await scrape(`Bearer ${operator}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    const values = parse(text);
    expect(values.get("warrant_workers_reporting")).toBe(2);
    for (const worker of [1, 2]) {
      expect(values.get(perWorker("process_cpu_seconds_total", worker))).toBeGreaterThan(0);
      expect(values.get(perWorker("process_resident_memory_bytes", worker))).toBeGreaterThan(0);
      expect(values.has(perWorker('warrant_pg_pool_connections{pool="requests",state="total"}', worker))).toBe(true);
      expect(values.has(perWorker("nodejs_eventloop_lag_seconds", worker))).toBe(true);
    }
    // The summed series is the workers' sum, and counts every thread created.
    const summed = values.get(CREATED) ?? 0;
    expect(summed).toBe((values.get(perWorker(CREATED, 1)) ?? 0) + (values.get(perWorker(CREATED, 2)) ?? 0));
    expect(summed).toBeGreaterThanOrEqual(threads.length);
    const read = 'warrant_http_requests_total{method="GET",route="/threads/:thread_id",status="200"}';
    expect(values.get(read)).toBeGreaterThanOrEqual(threads.length);
    expect(values.get("process_cpu_seconds_total")).toBeCloseTo(
      (values.get(perWorker("process_cpu_seconds_total", 1)) ?? 0) +
        (values.get(perWorker("process_cpu_seconds_total", 2)) ?? 0),
      6,
    );
    // Templates only: no thread id became a label.
    for (const thread of threads) expect(text).not.toContain(thread.thread_id);
    // The primary's series and the database-wide gauge, once each, with no worker label.
    expect(values.get("warrant_worker_restarts_total")).toBe(0);
    expect(values.get("warrant_reviews_pending")).toBe(0);
    expect(values.has(perWorker("warrant_reviews_pending", 1))).toBe(false);
    expect(text).toContain("# TYPE warrant_http_requests_total counter");
  });

  it("refuses without an operator token: 401 token_invalid, whatever the header holds", async () => {
    const user = `Bearer ${await sandbox.token("alice")}`;
    const headers = [
      undefined,
      user,
      "Bearer",
      "Bearer ",
      "Bearer a.b.c",
      `Basic ${Buffer.from("alice:secret").toString("base64")}`,
      `Bearer ${"x".repeat(5_000)}.${"y".repeat(5_000)}.z`,
      `Bearer ${operator}x`,
      "Bearer \u00ff\u00fe.\u00fd.\u00fc",
      `Bearer ${SCRAPER}x`,
      `Bearer ${SCRAPER.slice(0, -1)}`,
      `Bearer ${SCRAPER} ${SCRAPER}`,
      SCRAPER,
    ];
    for (const header of headers) {
      const response = await scrape(header);
      expect(response.status, String(header).slice(0, 40)).toBe(401);
      expect(((await response.json()) as { error: string }).error).toBe("token_invalid");
    }
  });

  it("takes the scraper's long-lived token (WARRANT_METRICS_TOKEN) for /metrics and for nothing else", async () => {
    const scraped = await scrape(`Bearer ${SCRAPER}`);
    expect(scraped.status).toBe(200);
    expect(parse(await scraped.text()).get("warrant_workers_reporting")).toBe(2);
    const elsewhere = [
      ["GET", "/operator/tools"],
      ["POST", "/threads/search"],
      ["GET", "/ui/session"],
    ] as const;
    for (const [method, pathname] of elsewhere) {
      const response = await fetch(`${server.url}${pathname}`, {
        method,
        headers: { Authorization: `Bearer ${SCRAPER}`, "Content-Type": "application/json" },
        ...(method === "POST" ? { body: "{}" } : {}),
      });
      expect(response.status, pathname).toBe(401);
    }
  });
});
