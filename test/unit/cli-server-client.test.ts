/**
 * The pieces that make the CLI a client of a running server: the runtime
 * file (written, read, removed only by its writer), the database identity it
 * is matched on, the operator token (accepted only for operator routes, never
 * an API token in its place), and the id of a keyed CLI thread.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mintApiToken } from "../../src/auth/api-token.js";
import { mintOperatorToken, verifyOperatorToken } from "../../src/auth/operator-token.js";
import { keyedThreadId } from "../../src/cli/chat-remote.js";
import {
  databaseIdentity,
  processAlive,
  readRuntimeFile,
  removeRuntimeFile,
  runtimeFilePath,
  writeRuntimeFile,
} from "../../src/server/runtime-file.js";

const alice = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: ["notes:read"],
  grants: { courses: ["cs301"] },
};

let dataDir: string;
beforeEach(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runtime-file-"));
});
afterEach(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe("the runtime file", () => {
  const contents = { url: "http://127.0.0.1:2024", pid: process.pid, database: "embedded:x", started_at: "now" };

  it("is read back as written, and removed only by the process that wrote it", async () => {
    await writeRuntimeFile(dataDir, contents);
    expect(await readRuntimeFile(dataDir, contents.database)).toEqual(contents);
    await removeRuntimeFile(dataDir, contents.database, process.pid + 1);
    expect(await readRuntimeFile(dataDir, contents.database)).toEqual(contents);
    await removeRuntimeFile(dataDir, contents.database);
    expect(await readRuntimeFile(dataDir, contents.database)).toBeUndefined();
  });

  it("is one per database: a server on Postgres neither overwrites nor removes the embedded server's file", async () => {
    const embedded = databaseIdentity({ databaseUrl: undefined, dataDir });
    const postgres = databaseIdentity({ databaseUrl: "postgres://postgres@127.0.0.1:5432/x", dataDir });
    const first = { ...contents, database: embedded };
    const second = { ...contents, url: "http://127.0.0.1:2025", pid: process.pid, database: postgres };
    await writeRuntimeFile(dataDir, first);
    await writeRuntimeFile(dataDir, second);
    expect(runtimeFilePath(dataDir, embedded)).toBe(path.join(dataDir, "server.json"));
    expect(runtimeFilePath(dataDir, postgres)).not.toBe(runtimeFilePath(dataDir, embedded));
    expect(path.basename(runtimeFilePath(dataDir, postgres))).toMatch(/^server-postgres-[0-9a-f]{16}\.json$/);
    expect(await readRuntimeFile(dataDir, embedded)).toEqual(first);
    expect(await readRuntimeFile(dataDir, postgres)).toEqual(second);
    await removeRuntimeFile(dataDir, postgres);
    expect(await readRuntimeFile(dataDir, postgres)).toBeUndefined();
    expect(await readRuntimeFile(dataDir, embedded)).toEqual(first);
    // A file whose contents name another database than its name says is not read as that database's.
    await fs.writeFile(runtimeFilePath(dataDir, postgres), JSON.stringify(first));
    expect(await readRuntimeFile(dataDir, postgres)).toBeUndefined();
  });

  it("is ignored when it is not one (bad JSON, a URL with a path, a missing field)", async () => {
    for (const text of [
      "{",
      JSON.stringify({ ...contents, url: "http://x/evil" }),
      JSON.stringify({ url: contents.url }),
    ]) {
      await fs.writeFile(runtimeFilePath(dataDir, contents.database), text);
      expect(await readRuntimeFile(dataDir, contents.database), text).toBeUndefined();
    }
  });

  it("tells databases apart without writing a URL to disk", () => {
    const url = "postgres://postgres:secret@127.0.0.1:5432/postgres";
    const identity = databaseIdentity({ databaseUrl: url, dataDir });
    expect(identity).not.toContain("secret");
    expect(identity).not.toBe(databaseIdentity({ databaseUrl: `${url}2`, dataDir }));
    expect(databaseIdentity({ databaseUrl: undefined, dataDir })).not.toBe(
      databaseIdentity({ databaseUrl: undefined, dataDir: `${dataDir}2` }),
    );
  });

  it("a live pid is alive; one past the kernel's maximum is not", () => {
    expect(processAlive(process.pid)).toBe(true);
    expect(processAlive(2 ** 22 + 1)).toBe(false);
  });
});

describe("operator tokens", () => {
  const secret = new Uint8Array(randomBytes(32));

  it("accepts its own, refuses another secret's, an API token, and anything malformed", async () => {
    const token = await mintOperatorToken(secret);
    expect(await verifyOperatorToken(secret, `Bearer ${token}`)).toBe(true);
    expect(await verifyOperatorToken(new Uint8Array(randomBytes(32)), `Bearer ${token}`)).toBe(false);
    expect(await verifyOperatorToken(secret, `Bearer ${await mintApiToken(secret, alice)}`)).toBe(false);
    for (const header of [undefined, "", token, "Bearer a.b", `Basic ${token}`])
      expect(await verifyOperatorToken(secret, header), String(header)).toBe(false);
  });
});

describe("keyed CLI threads", () => {
  it("one UUID per owner and key, the same every time", () => {
    const id = keyedThreadId(alice, "plan-1");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keyedThreadId(alice, "plan-1")).toBe(id);
    expect(keyedThreadId(alice, "plan-2")).not.toBe(id);
    expect(keyedThreadId({ ...alice, user_id: "bob" }, "plan-1")).not.toBe(id);
  });
});
