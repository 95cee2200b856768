/**
 * The OpenAPI document (src/server/openapi/): valid OpenAPI 3.1, listing every
 * route the server registers and nothing else, every error as the typed error
 * body; and the exchange checker the traffic test uses refuses what does not fit.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/server/openapi/document.js";
import { docsPage } from "../../src/server/openapi/docs-page.js";
import { exchangeChecker } from "../support/openapi-check.js";
import { API_ERROR_CODES } from "../../src/errors.js";

const document = openApiDocument("0.0.0-test");
const paths = document["paths"] as Record<string, Record<string, Record<string, unknown>>>;
const check = exchangeChecker(document);

/** Every `app.<method>("<path>"` in src/server, as `method /path/{param}`. */
function registeredRoutes(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (file.endsWith(".ts"))
        for (const match of readFileSync(file, "utf8").matchAll(/app\.(get|post|put|patch|delete)\(\s*"([^"]+)"/g))
          found.push(`${match[1]} ${(match[2] ?? "").replace(/:(\w+)/g, "{$1}")}`);
    }
  };
  walk("src/server");
  return found;
}

describe("the OpenAPI document", () => {
  it("validates as OpenAPI 3.1", async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("lists every route the server registers, and no other", () => {
    const documented = Object.entries(paths).flatMap(([p, item]) =>
      Object.keys(item).map((method) => `${method} ${p}`),
    );
    expect([...new Set(registeredRoutes())].sort()).toEqual([...documented].sort());
  });

  it("answers every error with the typed error body, naming every code", () => {
    const error = (document["components"] as { schemas: { Error: { properties: { error: { enum: string[] } } } } })
      .schemas.Error;
    for (const code of API_ERROR_CODES) expect(error.properties.error.enum).toContain(code);
    for (const [p, item] of Object.entries(paths))
      for (const [method, operation] of Object.entries(item)) {
        const responses = operation["responses"] as Record<string, { content?: Record<string, { schema?: unknown }> }>;
        expect(responses["500"], `${method} ${p}`).toBeDefined();
        for (const [status, answer] of Object.entries(responses))
          if (Number(status) >= 400 && !(p === "/mcp" || p === "/healthz"))
            expect(answer.content?.["application/json"]?.schema, `${method} ${p} ${status}`).toEqual({
              $ref: "#/components/schemas/Error",
            });
      }
  });

  it("holds no secret and no server configuration", () => {
    const text = JSON.stringify(document);
    expect(text).not.toMatch(/postgres:\/\/|WARRANT_AUTH_SECRET|BEGIN PRIVATE KEY/);
  });
});

describe("the exchange checker", () => {
  const thread = {
    thread_id: "7b0d4c3e-0a4e-4d8e-9a53-5b1f0e7f6a11",
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    metadata: {},
    status: "idle",
  };
  const exchange = (over: Record<string, unknown>) => ({
    method: "post",
    path: "/threads",
    status: 200,
    type: "application/json",
    request: {},
    response: thread,
    ...over,
  });

  it("accepts an exchange that fits", () => {
    expect(check(exchange({}))).toEqual([]);
    expect(check(exchange({ method: "get", path: `/threads/${thread.thread_id}`, request: null }))).toEqual([]);
    expect(check(exchange({ status: 422, response: { error: "invalid_request", message: "x" } }))).toEqual([]);
  });

  it("refuses a path, status, body or error code the document does not have", () => {
    expect(check(exchange({ path: "/nowhere" }))).toHaveLength(1);
    expect(check(exchange({ status: 418 }))).toHaveLength(1);
    expect(check(exchange({ response: { ...thread, status: "sleeping" } }))).toHaveLength(1);
    expect(check(exchange({ response: "a string" }))).toHaveLength(1);
    expect(check(exchange({ request: { thread_id: 42 } }))).toHaveLength(1);
    expect(check(exchange({ status: 422, response: { error: "no_such_code", message: "x" } }))).toHaveLength(1);
    expect(check(exchange({ status: 422, response: { message: "x" } }))).toHaveLength(1);
    expect(check(exchange({ type: "text/html" }))).toHaveLength(1);
  });

  it("matches a literal segment before a parameter", () => {
    expect(check(exchange({ path: "/threads/search", response: [thread] }))).toEqual([]);
  });
});

describe("/docs", () => {
  it("renders every operation, escaped, with no script or remote resource", () => {
    const page = docsPage(document);
    expect(page).not.toMatch(/<script|<link|src=|@import|url\(/i);
    const operations = Object.values(paths).reduce((sum, item) => sum + Object.keys(item).length, 0);
    expect(page.match(/<section class="op"/g)).toHaveLength(operations);
    const hostile = docsPage({ ...document, info: { title: "<script>alert(1)</script>", version: "1" } });
    expect(hostile).not.toContain("<script>");
  });
});
