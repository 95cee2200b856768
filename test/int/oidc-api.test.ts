/**
 * Sign-in from OpenID Connect providers, over the API (`npm start` on a real
 * Postgres, the real calendar): two real `oidc-provider` instances on
 * loopback ports, one with a `groups` list (tenant fixed), one with roles
 * under a namespaced claim (tenant from a claim). No part of the
 * verification is mocked: tokens are minted by the providers, or forged with
 * their own keys to show what is refused.
 */
import { spawn } from "node:child_process";
import { createPublicKey } from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";
import { base64url, decodeJwt, decodeProtectedHeader, importJWK, SignJWT, type JWK } from "jose";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../support/sandbox.js";
import { REPO_ROOT, loadSettings } from "../../src/env.js";
import { databaseIdentity, writeRuntimeFile } from "../../src/server/runtime-file.js";
import { groupsMapping, ROLES_CLAIM, rolesMapping, writeOidcConfig } from "./support/oidc-config.js";
import { startTestProvider, type TestProvider } from "./support/oidc-provider.js";
import { BOOKING_REQUEST, startTestServer, type TestServer } from "./support/server.js";

let staff: TestProvider;
let campus: TestProvider;
/** Configured, but down from the start: its discovery cannot be fetched. */
let gone: TestProvider;
let goneToken: string;
let server: TestServer;
let config: Awaited<ReturnType<typeof writeOidcConfig>>;

const fixture = useSandbox();
beforeAll(async () => {
  staff = fixture.add(
    await startTestProvider({
      audience: "warrant-api",
      accounts: {
        alice: { groups: ["study-students", "unknown-group"], name: "Alice" },
        rita: { groups: ["study-reviewers", "study-staff"], name: "Rita" },
        olga: { groups: ["warrant-operators"] },
        nobody: { groups: ["unknown-group"] },
        "Mixed|Subject": { groups: ["study-staff"] },
      },
    }),
  );
  campus = fixture.add(
    await startTestProvider({
      audience: "warrant-api",
      groupsClaim: ROLES_CLAIM,
      accounts: {
        carol: { groups: ["reviewer"], tenant: "college" },
        dave: { groups: ["learner"], tenant: "college" },
        "bad-tenant": { groups: ["learner"], tenant: "Not A Tenant" },
      },
    }),
  );
  gone = await startTestProvider({ audience: "warrant-api", accounts: { alice: { groups: ["study-students"] } } });
  goneToken = await gone.accessToken("alice");
  await gone.close();
  config = fixture.add(
    await writeOidcConfig({
      issuers: [groupsMapping(staff.issuer), rolesMapping(campus.issuer), groupsMapping(gone.issuer)],
    }),
  );
  server = fixture.add(await startTestServer({ settings: { WARRANT_CONFIG: config.path } }));
}, 120_000);

const get = (pathname: string, token: string | undefined) =>
  fetch(`${server.url}${pathname}`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
const errorOf = async (response: Response) => ((await response.json()) as { error?: string }).error;
const sessionOf = async (token: string) => {
  const response = await get("/ui/session", token);
  expect(response.status).toBe(200);
  return ((await response.json()) as { principal: Record<string, unknown> }).principal;
};
const sdk = (token: string) => new Client({ apiUrl: server.url, defaultHeaders: { Authorization: `Bearer ${token}` } });

/** A token signed with the provider's own current key, with claims a test chooses. */
async function forge(provider: TestProvider, claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
  const key = provider.keys[0] as JWK;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: "alice", groups: ["study-students"], jti: `forged-${now}-${Math.random()}`, ...claims })
    .setProtectedHeader({ alg: "RS256", kid: key.kid as string, ...header })
    .setIssuer(typeof claims["iss"] === "string" ? claims["iss"] : provider.issuer)
    .setAudience(typeof claims["aud"] === "string" ? claims["aud"] : "warrant-api")
    .setIssuedAt(typeof claims["iat"] === "number" ? claims["iat"] : now)
    .setExpirationTime(typeof claims["exp"] === "number" ? claims["exp"] : now + 300)
    .sign(await importJWK(key, "RS256"));
}

const encode = (value: unknown) => base64url.encode(JSON.stringify(value));

describe("tokens from the providers", () => {
  it("the SDK with a provider-issued token runs a study booking that rita (mapped from a group) approves", async () => {
    const alice = sdk(await staff.accessToken("alice"));
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: BOOKING_REQUEST }] },
    });
    expect((await alice.threads.get(thread.thread_id)).status).toBe("interrupted");
    const rita = await staff.accessToken("rita");
    const inbox = (await (await get("/reviews", rita)).json()) as { reviews: Array<{ thread_id: string }> };
    expect(inbox.reviews.map((review) => review.thread_id)).toContain(thread.thread_id);
    const decided = await fetch(`${server.url}/reviews/${thread.thread_id}`, {
      method: "POST",
      headers: { authorization: `Bearer ${rita}`, "content-type": "application/json" },
      body: JSON.stringify({ decisions: [{ type: "approve" }] }),
    });
    expect(decided.status).toBe(200);
    expect(await decided.json()).toMatchObject({ status: "completed" });
    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    try {
      const approvals = await client.query(
        "select approver, owner, outcome from warrant.approvals where thread_id = $1",
        [thread.thread_id],
      );
      expect(approvals.rows).toEqual([{ approver: "rita", owner: "alice", outcome: "approve" }]);
      const ledger = await client.query(
        "select tool, status, owner, approved_by from warrant.ledger where thread_id = $1",
        [thread.thread_id],
      );
      expect(ledger.rows).toEqual([
        { tool: "create_study_event", status: "succeeded", owner: "alice", approved_by: "rita" },
      ]);
    } finally {
      await client.end();
    }
  });

  it("maps claims to the principal: role, scopes and grants from mapped groups only; the tenant fixed per issuer", async () => {
    expect(await sessionOf(await staff.accessToken("alice"))).toMatchObject({
      user_id: "alice",
      tenant: "uni",
      role: "student",
      display_name: "Alice",
      scopes: ["notes:read", "calendar:read", "calendar:write"],
    });
    const rita = await sessionOf(await staff.accessToken("rita"));
    // The first mapped group in the config's order gives the role; scopes are the union.
    expect(rita).toMatchObject({ role: "reviewer", scopes: ["notes:read", "approvals:decide"] });
    // Only unmapped groups and no default: no principal at all.
    const nobody = await get("/ui/session", await staff.accessToken("nobody"));
    expect(nobody.status).toBe(401);
    expect(await errorOf(nobody)).toBe("principal_unmapped");
    // A subject that is not a Warrant user id becomes a stable digest of issuer and subject.
    const mixed = await sessionOf(await staff.accessToken("Mixed|Subject"));
    expect(mixed["user_id"]).toMatch(/^u-[0-9a-f]{40}$/);
    expect((await sessionOf(await staff.accessToken("Mixed|Subject")))["user_id"]).toBe(mixed["user_id"]);
  });

  it("two issuers, two mappings: roles under a namespaced claim and the tenant from a claim", async () => {
    expect(await sessionOf(await campus.accessToken("carol"))).toMatchObject({
      user_id: "carol",
      tenant: "college",
      role: "reviewer",
      scopes: ["notes:read", "approvals:decide"],
    });
    expect(await sessionOf(await campus.accessToken("dave"))).toMatchObject({ tenant: "college", role: "student" });
    const badTenant = await get("/ui/session", await campus.accessToken("bad-tenant"));
    expect(badTenant.status).toBe(401);
    expect(await errorOf(badTenant)).toBe("token_malformed");
    // The staff IdP's group names mean nothing at the campus IdP: a forged-by-nobody claim layout is just unmapped.
    const wrongLayout = await forge(campus, { sub: "eve", groups: ["study-reviewers"], tenant: "college" });
    const refused = await get("/ui/session", wrongLayout);
    expect(refused.status).toBe(401);
    expect(await errorOf(refused)).toBe("principal_unmapped");
    // carol (reviewer at college) sees none of uni's reviews.
    expect(
      ((await (await get("/reviews", await campus.accessToken("carol"))).json()) as { reviews: unknown[] }).reviews,
    ).toEqual([]);
  });

  it("a user removed from a mapped group loses the review right at their next token", async () => {
    const alice = sdk(await staff.accessToken("alice"));
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: BOOKING_REQUEST }] },
    });
    const account = staff.accounts.get("rita");
    if (!account) throw new Error("no rita");
    account.groups = ["study-staff"];
    try {
      const rita = await staff.accessToken("rita");
      expect(await sessionOf(rita)).toMatchObject({ role: "staff", scopes: ["notes:read"] });
      expect(((await (await get("/reviews", rita)).json()) as { reviews: unknown[] }).reviews).toEqual([]);
      const decided = await fetch(`${server.url}/reviews/${thread.thread_id}`, {
        method: "POST",
        headers: { authorization: `Bearer ${rita}`, "content-type": "application/json" },
        body: JSON.stringify({ decisions: [{ type: "approve" }] }),
      });
      expect(decided.status).toBe(404);
      expect((await alice.threads.get(thread.thread_id)).status).toBe("interrupted");
    } finally {
      account.groups = ["study-reviewers", "study-staff"];
    }
  });

  it("Warrant's own dev tokens still work beside the issuers", async () => {
    expect(await sessionOf(await server.token("alice"))).toMatchObject({ user_id: "alice", role: "student" });
  });

  it("revocation by jti still works for a provider's token", async () => {
    const token = await staff.accessToken("alice");
    expect((await get("/ui/session", token)).status).toBe(200);
    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    try {
      await client.query("insert into warrant.token_revocations (jti) values ($1)", [decodeJwt(token).jti]);
    } finally {
      await client.end();
    }
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const refused = await get("/ui/session", token);
    expect(refused.status).toBe(401);
    expect(await errorOf(refused)).toBe("token_revoked");
  });

  it("operator routes take a token of an operator group, and no other user's", async () => {
    expect((await get("/operator/tools", await staff.accessToken("olga"))).status).toBe(200);
    expect((await get("/operator/tools", await staff.accessToken("rita"))).status).toBe(401);
    expect((await get("/operator/tools", await server.token("alice"))).status).toBe(401);
    // A revoked operator token opens nothing.
    const olga = await staff.accessToken("olga");
    const client = new pg.Client({ connectionString: server.databaseUrl });
    await client.connect();
    try {
      await client.query("insert into warrant.token_revocations (jti) values ($1)", [decodeJwt(olga).jti]);
    } finally {
      await client.end();
    }
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await get("/operator/tools", olga)).status).toBe(401);
  });
});

describe("refused tokens", () => {
  it("expired, wrong audience, wrong issuer, alg none, HS256 with the public key, tampered → 401 with their codes", async () => {
    const now = Math.floor(Date.now() / 1000);
    const valid = await staff.accessToken("alice");
    const [header, payload, signature] = valid.split(".") as [string, string, string];
    const publicPem = createPublicKey({ key: staff.keys[0] as never, format: "jwk" }).export({
      type: "spki",
      format: "pem",
    }) as string;
    const hsWithPublicKey = await new SignJWT({ sub: "alice", groups: ["study-reviewers"] })
      .setProtectedHeader({ alg: "HS256", kid: decodeProtectedHeader(valid).kid as string })
      .setIssuer(staff.issuer)
      .setAudience("warrant-api")
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(publicPem));
    const cases: Array<[string, string, string]> = [
      ["expired", await forge(staff, { iat: now - 3600, exp: now - 600 }), "token_expired"],
      ["wrong audience", await forge(staff, { aud: "another-api" }), "token_audience_mismatch"],
      ["wrong issuer", await forge(staff, { iss: "https://idp.example.com" }), "token_issuer_unknown"],
      [
        "alg none",
        `${encode({ alg: "none", typ: "JWT" })}.${encode({ ...decodeJwt(valid), groups: ["study-reviewers"] })}.`,
        "token_algorithm_refused",
      ],
      ["HS256 with the public key", hsWithPublicKey, "token_algorithm_refused"],
      [
        "tampered",
        `${header}.${encode({ ...decodeJwt(valid), groups: ["study-reviewers"] })}.${signature}`,
        "token_invalid",
      ],
      ["tampered signature", `${header}.${payload}.${signature.slice(0, -4)}AAAA`, "token_invalid"],
      ["jku header", await forge(staff, {}, { jku: `${staff.issuer}/evil-jwks` }), "token_header_refused"],
      ["x5u header", await forge(staff, {}, { x5u: `${staff.issuer}/evil.pem` }), "token_header_refused"],
      ["unknown kid", await forge(staff, {}, { kid: "not-a-key-of-theirs" }), "token_invalid"],
      ["issued in the future", await forge(staff, { iat: now + 3600, exp: now + 7200 }), "token_malformed"],
      ["not yet valid", await forge(staff, { nbf: now + 3600 }), "token_invalid"],
      ["no exp", `${header}.${encode({ ...decodeJwt(valid), exp: undefined })}.${signature}`, "token_invalid"],
    ];
    for (const [name, token, code] of cases) {
      const response = await get("/ui/session", token);
      expect(response.status, name).toBe(401);
      expect(await errorOf(response), name).toBe(code);
      expect(response.headers.get("www-authenticate"), name).toContain("invalid_token");
    }
  });

  it("hostile claims and token text: 401, never a 500", async () => {
    const nested: unknown[] = [];
    let cursor = nested;
    for (let depth = 0; depth < 200; depth += 1) {
      const next: unknown[] = [];
      cursor.push(next);
      cursor = next;
    }
    const cases: Array<[string, string, string]> = [
      ["groups nested deep", await forge(staff, { groups: nested }), "token_malformed"],
      ["groups of the wrong type", await forge(staff, { groups: { "study-reviewers": true } }), "token_malformed"],
      [
        "too many groups",
        await forge(staff, { groups: Array.from({ length: 300 }, (_, index) => `g${index}`) }),
        "token_malformed",
      ],
      ["sub of the wrong type", await forge(staff, { sub: 42 }), "token_malformed"],
      ["control characters in sub", await forge(staff, { sub: "ali\u0000ce\n" }), "token_ok_or_digest"],
      ["__proto__ groups", await forge(staff, { groups: ["__proto__", "constructor"] }), "principal_unmapped"],
      ["oversized", `${"a".repeat(13_000)}.b.c`, "token_malformed"],
      ["not a JWT", "not a jwt", "token_malformed"],
      ["garbage segments", "e30.e30.e30", "token_invalid"],
    ];
    for (const [name, token, code] of cases) {
      const response = await get("/ui/session", token);
      if (code === "token_ok_or_digest") {
        // Control characters never become a user id: the subject is digested.
        expect(response.status, name).toBe(200);
        expect(((await response.json()) as { principal: { user_id: string } }).principal.user_id).toMatch(/^u-/);
        continue;
      }
      expect(response.status, name).toBe(401);
      expect(await errorOf(response), name).toBe(code);
    }
  });
});

describe("the provider's keys", () => {
  it("a new signing key at the provider (new kid) keeps working without a restart", async () => {
    const before = await staff.accessToken("alice");
    expect((await get("/ui/session", before)).status).toBe(200);
    const key = await staff.rotate();
    const after = await staff.accessToken("alice");
    expect(decodeProtectedHeader(after).kid).toBe(key.kid);
    // The unknown kid makes the server refetch the key set once its cooldown (1 s here) has passed.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await get("/ui/session", after)).status).toBe(200);
    expect((await get("/ui/session", before)).status).toBe(200);
  });

  it("a key set that cannot be fetched fails closed: 503 auth_unavailable, no admission", async () => {
    staff.jwksDown(true);
    try {
      await staff.rotate();
      const unknownKid = await staff.accessToken("alice");
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const response = await get("/ui/session", unknownKid);
      expect(response.status).toBe(503);
      expect(await errorOf(response)).toBe("auth_unavailable");
      expect(response.headers.get("retry-after")).toBe("1");
      // Nothing was admitted: no thread can be made with it either.
      expect(
        (
          await fetch(`${server.url}/threads`, {
            method: "POST",
            headers: { authorization: `Bearer ${unknownKid}`, "content-type": "application/json" },
            body: "{}",
          })
        ).status,
      ).toBe(503);
    } finally {
      staff.jwksDown(false);
    }
  });

  it("an issuer whose discovery cannot be fetched fails closed too", async () => {
    const response = await get("/ui/session", goneToken);
    expect(response.status).toBe(503);
    expect(await errorOf(response)).toBe("auth_unavailable");
  });
});

/** Runs a CLI command of this checkout against the test server (found through its runtime file). */
function cli(script: string, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      WARRANT_DATA_DIR: server.dataDir,
      DATABASE_URL: server.databaseUrl,
      WARRANT_CONFIG: config.path,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, stdout, stderr })),
  );
}

describe("the CLI with a provider's token", () => {
  beforeAll(async () => {
    const settings = loadSettings({ WARRANT_DATA_DIR: server.dataDir, DATABASE_URL: server.databaseUrl });
    await writeRuntimeFile(server.dataDir, {
      url: server.url,
      pid: process.pid,
      database: databaseIdentity(settings),
      started_at: new Date().toISOString(),
    });
  });

  it("npm run chat -- --token runs as the token's user on the running server", async () => {
    const token = await staff.accessToken("alice");
    const { code, stdout, stderr } = await cli(
      "src/cli/chat.ts",
      ["--token", token, "--json", "Compare self-attention with cross-attention using my notes"],
      {},
    );
    expect(code, stderr).toBe(0);
    const result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
    expect(result).toMatchObject({ termination_reason: { code: "final_answer" } });
  }, 180_000);

  it("operator commands need an operator group: WARRANT_TOKEN of olga lists the tools, alice's is refused", async () => {
    const olga = await cli("src/cli/tools.ts", ["list", "--json"], { WARRANT_TOKEN: await staff.accessToken("olga") });
    expect(olga.code, olga.stderr).toBe(0);
    const alice = await cli("src/cli/tools.ts", ["list", "--json"], {
      WARRANT_TOKEN: await staff.accessToken("alice"),
    });
    expect(alice.code).toBe(1);
    expect(alice.stderr).toContain("token_invalid");
  }, 180_000);
});
