/**
 * End-to-end tests of the caseops MCP server over Streamable HTTP: a real child
 * process (and, for the session-bound load test, the same server in-process),
 * the SDK client, and task tokens minted exactly as the host mints them.
 */
import { spawn, type ChildProcessByStdio } from "node:child_process";
import { randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import path from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintTaskToken } from "../../src/auth/task-token.js";
import { startCaseopsServer, type CaseopsServerHandle } from "../../tools/caseops/server.js";
import { type Finished, outputOf } from "../support/child-output.js";
import { textOf } from "../support/mcp.js";
import { useSandbox } from "../support/sandbox.js";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const SERVER_ARGS = ["--import", "tsx", path.join("tools", "caseops", "server.ts")];
const SECRET = new Uint8Array(randomBytes(32));
const SECRET_HEX = Buffer.from(SECRET).toString("hex");
const CASE_DENIED_TEXT = '{"code":"access_denied","message":"case not found or not accessible"}';
const URL_LINE = /^caseops listening on (http:\/\/127\.0\.0\.1:[0-9]+\/mcp)$/;

// Spawning node with the tsx loader takes a second or two on a cold cache.
const SPAWN_TIMEOUT_MS = 30_000;

type Claims = Parameters<typeof mintTaskToken>[1];
const ACME: Claims = {
  audience: "caseops",
  tenant: "acme",
  task: "thread-c102",
  subject: "alice",
  scopes: ["cases:read"],
};
const GLOBEX: Claims = {
  audience: "caseops",
  tenant: "globex",
  task: "thread-g1",
  subject: "gina",
  scopes: ["cases:read"],
};

const mint = (claims: Claims = ACME, options: { ttlSeconds?: number; now?: number } = {}): Promise<string> =>
  mintTaskToken(SECRET, claims, options);

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
};

interface RunningChild {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly url: string;
  readonly stderr: () => string;
}

/** Starts the server process and resolves with the URL it announces on its first stdout line. */
function spawnServer(extraArgs: readonly string[] = []): Promise<RunningChild> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SERVER_ARGS, "--port", "0", ...extraArgs], {
      cwd: REPO_ROOT,
      env: { PATH: process.env["PATH"] ?? "", WARRANT_TASK_TOKEN_SECRET: SECRET_HEX },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const newline = stdout.indexOf("\n");
      if (newline === -1) return;
      const match = URL_LINE.exec(stdout.slice(0, newline));
      if (match?.[1] === undefined) reject(new Error(`unexpected first stdout line: ${JSON.stringify(stdout)}`));
      else resolve({ child, url: match[1], stderr: () => stderr });
    });
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`server exited with ${String(code)} before listening: ${stderr}`)));
  });
}

function runToCompletion(args: readonly string[], environment: Record<string, string>): Promise<Finished> {
  return outputOf(
    spawn(process.execPath, [...SERVER_ARGS, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env["PATH"] ?? "", ...environment },
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
}

/** A client whose every HTTP request carries whatever token `bearer.token` holds at that moment. */
async function connect(
  url: string,
  bearer: { token: string },
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", `Bearer ${bearer.token}`);
      return fetch(input, { ...init, headers });
    },
  });
  const client = new Client({ name: "caseops-server-test", version: "0.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** A client with one fixed token, passed the plain way through `requestInit`. */
async function connectWithToken(url: string, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "caseops-server-test", version: "0.0.0" });
  await client.connect(transport);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** Successful result: structured content, mirrored exactly by the text block. */
function structured<T>(result: CallToolResult): T {
  expect(result.isError).toBeFalsy();
  expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

/** POSTs an initialize request with an optional Authorization header; returns status, headers and parsed body. */
async function rawPost(url: string, authorization: string | undefined, body: string = JSON.stringify(INITIALIZE)) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (authorization !== undefined) headers["authorization"] = authorization;
  const response = await fetch(url, { method: "POST", headers, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text };
}

function errorCodeOf(text: string): unknown {
  return (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
}

describe("caseops server (child process)", () => {
  let server: RunningChild;
  let acme: Client;
  const issuedTokens: string[] = [];

  beforeAll(async () => {
    server = await spawnServer();
    const token = await mint();
    issuedTokens.push(token);
    acme = await connectWithToken(server.url, token);
    // listTools also primes the client's output-schema validators for callTool.
    await acme.listTools();
  }, SPAWN_TIMEOUT_MS);

  afterAll(async () => {
    await acme?.close();
    if (server !== undefined && server.child.exitCode === null) {
      const exited = new Promise((resolve) => server.child.once("exit", resolve));
      server.child.kill("SIGTERM");
      await exited;
    }
  });

  describe("authentication", () => {
    it("answers a request without a token with 401 missing_token and a Bearer challenge", async () => {
      const response = await rawPost(server.url, undefined);
      expect(response.status).toBe(401);
      expect(errorCodeOf(response.text)).toBe("missing_token");
      expect(JSON.parse(response.text)).toEqual({ error: { code: "missing_token" } });
      expect(response.headers.get("www-authenticate")).toBe("Bearer");
      // Another scheme is no bearer token either.
      const basic = await rawPost(server.url, "Basic YWxpY2U6c2VjcmV0");
      expect(basic.status).toBe(401);
      expect(errorCodeOf(basic.text)).toBe("missing_token");
    });

    it("answers tampered, forged, expired and wrong-audience tokens with 401 and their codes", async () => {
      const token = await mint();
      const [header, payload, signature] = token.split(".") as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
      const otherTenant = Buffer.from(JSON.stringify({ ...claims, tenant: "globex" })).toString("base64url");
      const unsigned = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString("base64url")}.${payload}.`;
      const otherSecret = await mintTaskToken(new Uint8Array(32).fill(9), ACME);
      const expired = await mint(ACME, { ttlSeconds: 60, now: Date.now() - 10 * 60_000 });
      const wrongAudience = await mint({ ...ACME, audience: "calendar" });
      const cases: Array<[string, string]> = [
        [`${header}.${otherTenant}.${signature}`, "invalid_token"],
        [`${header}.${payload}.${signature.slice(0, -2)}AA`, "invalid_token"],
        [unsigned, "invalid_token"],
        [otherSecret, "invalid_token"],
        ["not-a-token", "invalid_token"],
        [expired, "token_expired"],
        [wrongAudience, "wrong_audience"],
      ];
      for (const [candidate, code] of cases) {
        issuedTokens.push(candidate);
        const response = await rawPost(server.url, `Bearer ${candidate}`);
        expect(response.status, code).toBe(401);
        expect(JSON.parse(response.text), code).toEqual({ error: { code } });
        expect(response.headers.get("www-authenticate"), code).toMatch(/^Bearer error="invalid_token"/);
      }
    });

    it("makes the SDK client fail to connect with a refused token", async () => {
      const expired = await mint(ACME, { ttlSeconds: 60, now: Date.now() - 10 * 60_000 });
      issuedTokens.push(expired);
      const error = await connectWithToken(server.url, expired).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(StreamableHTTPError);
      expect((error as StreamableHTTPError).code).toBe(401);
    });

    it("answers a body over 1 MiB with 413 before parsing it", async () => {
      const token = await mint();
      issuedTokens.push(token);
      const huge = JSON.stringify({ ...INITIALIZE, padding: "x".repeat(1024 * 1024) });
      const response = await rawPost(server.url, `Bearer ${token}`, huge);
      expect(response.status).toBe(413);
      expect(errorCodeOf(response.text)).toBe("payload_too_large");
      // The server is still healthy afterwards.
      const snapshot = await call(acme, "get_case_snapshot", { case_id: "C-101" });
      expect(snapshot.isError).toBeFalsy();
    });

    it("answers a streamed (chunked) body that grows past 1 MiB with 413", async () => {
      const token = await mint();
      issuedTokens.push(token);
      const status = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(server.url, {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "transfer-encoding": "chunked",
          },
        });
        request.once("response", (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.once("error", reject);
        const chunk = "x".repeat(64 * 1024);
        for (let written = 0; written <= 1024 * 1024; written += chunk.length) request.write(chunk);
        request.end();
      });
      expect(status).toBe(413);
    });

    it("answers other paths with 404 JSON", async () => {
      const response = await fetch(new URL("/other", server.url));
      expect(response.status).toBe(404);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await response.json()).toEqual({ error: { code: "not_found" } });
    });
  });

  describe("tools", () => {
    it("lists four read-only tools with strict input and output schemas", async () => {
      const { tools } = await acme.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        "get_case_snapshot",
        "get_policy_requirements",
        "list_unclassified_documents",
        "resolve_document_alias",
      ]);
      for (const tool of tools) {
        expect(tool.annotations?.readOnlyHint, tool.name).toBe(true);
        expect(tool.inputSchema["additionalProperties"], tool.name).toBe(false);
        expect(tool.inputSchema.required, tool.name).toContain("case_id");
        expect(tool.inputSchema.properties, tool.name).not.toHaveProperty("tenant");
        expect(tool.outputSchema, tool.name).toBeDefined();
      }
    });

    it("walks the C-102 investigation: missing code, required by policy, found under another name", async () => {
      const snapshot = structured<{
        tenant: string;
        document_codes: string[];
        evidence_ref: string;
        source_id: string;
        version: number;
      }>(await call(acme, "get_case_snapshot", { case_id: "C-102" }));
      expect(snapshot.tenant).toBe("acme");
      expect([...snapshot.document_codes].sort()).toEqual(["IDENTITY_DOCUMENT", "LOSS_STATEMENT"]);
      expect(snapshot.evidence_ref).toBe(`case:C-102@v${snapshot.version}`);
      expect(snapshot.source_id).not.toBe("");

      const requirements = structured<{
        rule_version: string;
        required_documents: string[];
        evidence_ref: string;
        source_id: string;
      }>(await call(acme, "get_policy_requirements", { case_id: "C-102" }));
      expect(requirements.rule_version).toBe("motor-2026.1");
      expect(requirements.required_documents).toEqual(
        expect.arrayContaining(["LOSS_STATEMENT", "IDENTITY_DOCUMENT", "ACCIDENT_CERTIFICATE"]),
      );
      expect(requirements.evidence_ref).toBe("policy:motor-2026.1");
      const missing = requirements.required_documents.filter((code) => !snapshot.document_codes.includes(code));
      expect(missing).toEqual(["ACCIDENT_CERTIFICATE"]);

      const unclassified = structured<{
        documents: Array<{ document_id: string; title: string; evidence_ref: string; source_id: string }>;
      }>(await call(acme, "list_unclassified_documents", { case_id: "C-102" }));
      const letter = unclassified.documents.find(
        (document) => document.title === "Road Traffic Accident Determination Letter",
      );
      expect(letter).toBeDefined();
      expect(letter?.evidence_ref).toBe(`document:${letter?.document_id}`);
      expect(letter?.source_id).not.toBe("");

      const alias = structured<{
        document_id: string;
        normalized_code: string | null;
        confidence: number;
        evidence_ref: string;
        source_id: string;
      }>(await call(acme, "resolve_document_alias", { case_id: "C-102", document_id: letter?.document_id }));
      expect(alias).toMatchObject({
        document_id: letter?.document_id,
        normalized_code: "ACCIDENT_CERTIFICATE",
        confidence: 1,
      });
      expect(alias.evidence_ref).toBe(`alias:${letter?.document_id}`);
      expect(alias.source_id).not.toBe("");
    });

    it("leaves a genuinely missing document missing (C-103) and resolves unknown titles to null", async () => {
      const unclassified = structured<{ documents: Array<{ document_id: string }> }>(
        await call(acme, "list_unclassified_documents", { case_id: "C-103" }),
      );
      for (const document of unclassified.documents) {
        const alias = structured<{ normalized_code: string | null; confidence: number }>(
          await call(acme, "resolve_document_alias", { case_id: "C-103", document_id: document.document_id }),
        );
        expect(alias).toMatchObject({ normalized_code: null, confidence: 0 });
      }
    });

    it("gives another tenant's case and a missing case byte-identical answers", async () => {
      const globexToken = await mint(GLOBEX);
      issuedTokens.push(globexToken);
      const globex = await connectWithToken(server.url, globexToken);
      try {
        await globex.listTools();
        const foreign = await call(globex, "get_case_snapshot", { case_id: "C-102" });
        const absent = await call(globex, "get_case_snapshot", { case_id: "C-999" });
        expect(foreign.isError).toBe(true);
        expect(textOf(foreign)).toBe(CASE_DENIED_TEXT);
        expect(textOf(absent)).toBe(textOf(foreign));
        expect(absent).toEqual(foreign);
        for (const name of ["get_policy_requirements", "list_unclassified_documents"]) {
          expect(await call(globex, name, { case_id: "C-102" }), name).toEqual(foreign);
        }
        expect(await call(globex, "resolve_document_alias", { case_id: "C-102", document_id: "DOC-7781" })).toEqual(
          foreign,
        );
        // The tenant's own case works over the same connection.
        expect((await call(globex, "get_case_snapshot", { case_id: "C-201" })).isError).toBeFalsy();
      } finally {
        await globex.close();
      }
      // And the other direction.
      expect(await call(acme, "get_case_snapshot", { case_id: "C-201" })).toEqual(
        await call(acme, "get_case_snapshot", { case_id: "C-999" }),
      );
    });

    it("refuses a document that is not an unclassified document of the case", async () => {
      const result = await call(acme, "resolve_document_alias", { case_id: "C-102", document_id: "DOC-8802" });
      expect(result.isError).toBe(true);
      expect(JSON.parse(textOf(result))).toMatchObject({ code: "access_denied" });
    });

    it("denies every tool to a token without cases:read", async () => {
      const token = await mint({ ...ACME, scopes: ["documents:resolve"] });
      issuedTokens.push(token);
      const client = await connectWithToken(server.url, token);
      try {
        for (const [name, args] of [
          ["get_case_snapshot", { case_id: "C-102" }],
          ["get_policy_requirements", { case_id: "C-102" }],
          ["list_unclassified_documents", { case_id: "C-102" }],
          ["resolve_document_alias", { case_id: "C-102", document_id: "DOC-7781" }],
        ] as const) {
          const result = await call(client, name, args);
          expect(result.isError, name).toBe(true);
          expect(JSON.parse(textOf(result)), name).toMatchObject({ code: "access_denied" });
          expect(result.structuredContent, name).toBeUndefined();
        }
      } finally {
        await client.close();
      }
    });

    it("rejects malformed and extra arguments", async () => {
      for (const args of [{ case_id: "C-1" }, { case_id: "c-102" }, { case_id: "C-102", tenant: "globex" }, {}]) {
        const result = await call(acme, "get_case_snapshot", args);
        expect(result.isError, JSON.stringify(args)).toBe(true);
        expect(textOf(result), JSON.stringify(args)).not.toContain("IDENTITY_DOCUMENT");
      }
      const badDocument = await call(acme, "resolve_document_alias", { case_id: "C-102", document_id: "7781" });
      expect(badDocument.isError).toBe(true);
    });
  });

  describe("sessions", () => {
    it("verifies the token on every request and binds the session to its first tenant", async () => {
      const bearer = { token: await mint() };
      const { client } = await connect(server.url, bearer);
      try {
        expect((await call(client, "get_case_snapshot", { case_id: "C-102" })).isError).toBeFalsy();

        bearer.token = await mint(ACME, { ttlSeconds: 60, now: Date.now() - 10 * 60_000 });
        await expect(call(client, "get_case_snapshot", { case_id: "C-102" })).rejects.toMatchObject({ code: 401 });

        bearer.token = await mint(GLOBEX);
        const mismatch = await call(client, "get_case_snapshot", { case_id: "C-201" }).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(mismatch).toBeInstanceOf(StreamableHTTPError);
        expect((mismatch as StreamableHTTPError).code).toBe(403);
        expect((mismatch as Error).message).toContain("tenant_mismatch");

        // Same tenant, another user and narrower scopes: the call acts with the new request's claims.
        bearer.token = await mint({ ...ACME, subject: "bob", scopes: [] });
        const narrowed = await call(client, "get_case_snapshot", { case_id: "C-102" });
        expect(narrowed.isError).toBe(true);

        bearer.token = await mint();
        expect((await call(client, "get_case_snapshot", { case_id: "C-102" })).isError).toBeFalsy();
      } finally {
        await client.close();
      }
    });

    it("never writes a token to its logs", () => {
      const log = server.stderr();
      for (const token of issuedTokens) {
        const signature = token.split(".")[2] ?? "";
        expect(log).not.toContain(token);
        if (signature.length > 10) expect(log).not.toContain(signature);
      }
    });
  });
});

describe("caseops server (in-process)", () => {
  let handle: CaseopsServerHandle;

  beforeAll(async () => {
    handle = fixture.add(
      await startCaseopsServer({
        port: 0,
        host: "127.0.0.1",
        secret: SECRET,
        audience: "caseops",
        log: () => undefined,
      }),
    );
  });

  const fixture = useSandbox();

  it("serves 1,000 calls with a fresh token each over one session", async () => {
    expect(handle.url).toMatch(/^http:\/\/127\.0\.0\.1:[0-9]+\/mcp$/);
    const bearer = { token: await mint() };
    const { client, transport } = await connect(handle.url, bearer);
    await client.listTools();
    expect(handle.stats().sessions).toBe(1);
    const requestsBefore = handle.stats().requests;
    const tokens = new Set<string>();
    try {
      for (let call_number = 0; call_number < 1000; call_number += 1) {
        bearer.token = await mint();
        tokens.add(bearer.token);
        const result = await call(client, "get_case_snapshot", { case_id: "C-102" });
        if (result.isError) throw new Error(`call ${call_number} failed: ${textOf(result)}`);
        if (call_number % 100 === 0) expect(handle.stats().sessions).toBe(1);
      }
      expect(tokens.size).toBe(1000);
      expect(handle.stats().sessions).toBe(1);
      expect(handle.stats().requests - requestsBefore).toBeGreaterThanOrEqual(1000);
      await transport.terminateSession();
      expect(handle.stats().sessions).toBe(0);
    } finally {
      await client.close();
    }
  }, 120_000);

  it("refuses a non-loopback host and a short secret", async () => {
    await expect(startCaseopsServer({ port: 0, host: "0.0.0.0", secret: SECRET, audience: "caseops" })).rejects.toThrow(
      /loopback/,
    );
    await expect(
      startCaseopsServer({ port: 0, host: "127.0.0.1", secret: new Uint8Array(16), audience: "caseops" }),
    ).rejects.toThrow(/32 bytes/);
  });
});

describe("caseops server command line", () => {
  it(
    "prints usage for --help",
    async () => {
      const outcome = await runToCompletion(["--help"], {});
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).toMatch(/^Usage: /);
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "exits 1 with one stderr line when the secret is missing or short",
    async () => {
      const environments: Record<string, string>[] = [{}, { WARRANT_TASK_TOKEN_SECRET: "ab".repeat(16) }];
      for (const environment of environments) {
        const outcome = await runToCompletion(["--port", "0"], environment);
        expect(outcome.code).toBe(1);
        expect(outcome.stdout).toBe("");
        expect(outcome.stderr.trimEnd().split("\n")).toHaveLength(1);
        expect(outcome.stderr).toContain("WARRANT_TASK_TOKEN_SECRET");
      }
    },
    SPAWN_TIMEOUT_MS,
  );
});
