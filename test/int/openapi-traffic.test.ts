/**
 * The OpenAPI document cannot drift from the server: a representative set of
 * integration files runs with the traffic recorder on (test/support/record-traffic.ts),
 * and every recorded exchange must fit the document: its path a template,
 * its accepted request the request schema, its answer the status's schema
 * (test/support/openapi-check.ts).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/server/openapi/document.js";
import { exchangeChecker, type Exchange } from "../support/openapi-check.js";

/** Files whose traffic is recorded: runs and threads, reviews, elicitations, the store, crons, hostile bodies. */
const RECORDED = [
  "test/int/api-fidelity.test.ts",
  "test/int/review-inbox.test.ts",
  "test/int/elicitation.test.ts",
  "test/int/store-api.test.ts",
  "test/int/crons.test.ts",
  "test/int/client-payloads.test.ts",
];

const dir = mkdtempSync(path.join(os.tmpdir(), "warrant-traffic-"));
const file = path.join(dir, "traffic.jsonl");
let exchanges: Exchange[] = [];
let childExit: number | null = null;

beforeAll(async () => {
  childExit = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, ["node_modules/vitest/vitest.mjs", "run", ...RECORDED], {
      env: { ...process.env, WARRANT_RECORD_TRAFFIC: file },
      stdio: ["ignore", "ignore", "inherit"],
      detached: true,
    });
    const timer = setTimeout(() => {
      if (child.pid) process.kill(-child.pid, "SIGTERM");
    }, 1_100_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  exchanges = existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as Exchange)
    : [];
}, 1_200_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("recorded API traffic against /openapi.json", () => {
  it("fits the document, exchange by exchange, over every family of routes", () => {
    // The recorded files' own outcome is theirs to report; this test holds their traffic to the document.
    if (childExit !== 0) process.stderr.write(`openapi-traffic: the recorded files exited ${childExit}\n`);
    const check = exchangeChecker(openApiDocument("traffic"));
    const problems = exchanges.flatMap((exchange) => check(exchange));
    expect([...new Set(problems)]).toEqual([]);
    expect(exchanges.length).toBeGreaterThan(50);
    const families = new Set(exchanges.map((exchange) => exchange.path.split("/")[1]));
    for (const family of ["threads", "runs", "reviews", "store", "assistants"]) expect(families).toContain(family);
    expect(exchanges.some((exchange) => exchange.path.includes("/elicitations"))).toBe(true);
    expect(exchanges.some((exchange) => exchange.path.startsWith("/runs/crons"))).toBe(true);
    expect(exchanges.some((exchange) => exchange.status >= 400)).toBe(true);
  });
});
