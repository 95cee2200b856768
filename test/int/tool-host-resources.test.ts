/**
 * The ToolHost's resource and prompt API: stdio servers receive the caller's
 * identity in `_meta`, results are normalized (text joined, JSON parsed once,
 * non-text named), and every failure is a typed code: unknown server, missing
 * capability, unknown name, a server's own refusal, a server that is down.
 * Against a tiny fixture server (test/int/support/meta-server.ts), the
 * third-party "everything" server, and the filesystem server (no resources).
 */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectTools, type CallOptions, type ToolHost } from "../../src/mcp/tool-host.js";
import { parseConfig } from "../../src/policy/config.js";
import { principal } from "./support/agent.js";
import { childrenRunning, waitFor } from "./support/processes.js";

const FIXTURE = "test/int/support/meta-server.ts";

let folder: string;
let tools: ToolHost;
let alice: CallOptions;
let dana: CallOptions;

beforeAll(async () => {
  folder = await realpath(await mkdtemp(path.join(os.tmpdir(), "warrant-resources-")));
  const config = parseConfig(
    JSON.stringify({
      servers: {
        meta: {
          transport: "stdio",
          command: "node",
          args: ["--import", "tsx", FIXTURE],
          reconnect: { base_ms: 100, max_ms: 400 },
        },
        everything: {
          transport: "stdio",
          command: "node",
          args: ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"],
        },
        files: {
          transport: "stdio",
          command: "node",
          args: ["node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", folder],
        },
      },
      tools: {},
    }),
    "resources test config",
  );
  tools = await connectTools(config, undefined, { onHealth: () => undefined });
  alice = { timeoutMs: 5_000, principal: await principal("alice"), threadId: "resources-thread" };
  dana = { timeoutMs: 5_000, principal: await principal("dana"), threadId: "resources-thread" };
}, 60_000);

afterAll(async () => {
  await tools?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe("readResource", () => {
  it("sends the caller's identity in _meta and parses a JSON resource once", async () => {
    expect(await tools.readResource("meta", "meta://whoami", alice)).toEqual({
      ok: true,
      text: '{"user_id":"alice","tenant":"uni"}',
      structured: { user_id: "alice", tenant: "uni" },
    });
    expect(await tools.readResource("meta", "meta://whoami", dana)).toMatchObject({
      ok: true,
      structured: { user_id: "dana", tenant: "acme" },
    });
  });

  it("joins text contents and leaves non-JSON text unstructured", async () => {
    expect(await tools.readResource("meta", "meta://two-parts", alice)).toEqual({
      ok: true,
      text: "part one\npart two",
      structured: undefined,
    });
    const document = await tools.readResource("everything", "demo://resource/static/document/architecture.md", alice);
    expect(document).toMatchObject({ ok: true, structured: undefined });
    expect(document.ok && document.text.startsWith("# Everything Server")).toBe(true);
  });

  it("types every failure", async () => {
    expect(await tools.readResource("meta", "meta://denied", alice)).toMatchObject({
      ok: false,
      code: "access_denied",
    });
    expect(await tools.readResource("meta", "meta://nothing-here", alice)).toMatchObject({
      ok: false,
      code: "not_found",
    });
    expect(await tools.readResource("files", `file://${folder}`, alice)).toEqual({
      ok: false,
      code: "tool_not_permitted",
      message: "the files server offers no resources",
    });
    expect(await tools.readResource("nowhere", "meta://whoami", alice)).toMatchObject({
      ok: false,
      code: "unknown_tool",
    });
    expect(await tools.readResource("meta", "", alice)).toMatchObject({ ok: false, code: "invalid_arguments" });
    for (const result of [
      await tools.readResource("meta", "meta://denied", alice),
      await tools.readResource("meta", "meta://nothing-here", alice),
    ]) {
      expect(result.ok || result.message).not.toMatch(/\n\s+at |MCP error/);
    }
  });
});

describe("getPrompt", () => {
  it("returns role and text messages, naming non-text content", async () => {
    expect(await tools.getPrompt("meta", "greet", { name: "Bob" }, alice)).toEqual({
      ok: true,
      messages: [
        { role: "user", text: "Say hello to Bob for alice." },
        { role: "assistant", text: "[image content omitted]" },
      ],
    });
    expect(await tools.getPrompt("everything", "args-prompt", { city: "Paris" }, alice)).toEqual({
      ok: true,
      messages: [{ role: "user", text: "What's weather in Paris?" }],
    });
  });

  it("types every failure", async () => {
    expect(await tools.getPrompt("meta", "no-such-prompt", {}, alice)).toMatchObject({ ok: false, code: "not_found" });
    expect(await tools.getPrompt("meta", "greet", {}, alice)).toMatchObject({ ok: false, code: "invalid_arguments" });
    expect(await tools.getPrompt("files", "greet", { name: "Bob" }, alice)).toMatchObject({
      ok: false,
      code: "tool_not_permitted",
    });
    expect(await tools.getPrompt("nowhere", "greet", { name: "Bob" }, alice)).toMatchObject({
      ok: false,
      code: "unknown_tool",
    });
  });
});

describe("a server that is down", () => {
  it("answers server_unavailable until it is reconnected", async () => {
    const [child] = await childrenRunning(FIXTURE);
    if (!child) throw new Error("no fixture process");
    process.kill(child.pid, "SIGKILL");
    await waitFor(() => !tools.isHealthy("meta"), "meta to be marked unhealthy", 5_000);
    expect(await tools.readResource("meta", "meta://whoami", alice)).toMatchObject({
      ok: false,
      code: "server_unavailable",
    });
    expect(await tools.getPrompt("meta", "greet", { name: "Bob" }, alice)).toMatchObject({
      ok: false,
      code: "server_unavailable",
    });
    await waitFor(() => tools.isHealthy("meta"), "meta to reconnect");
    expect(await tools.readResource("meta", "meta://whoami", alice)).toMatchObject({
      ok: true,
      structured: { user_id: "alice" },
    });
  }, 30_000);
});
