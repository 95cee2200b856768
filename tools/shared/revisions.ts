/**
 * One stdio server process answering both MCP revisions with the same tool
 * definitions: a client that opens with `initialize` (2025-11-25) is served by
 * the v1 SDK's McpServer, exactly as before; any other opening message (the
 * 2026-07-28 `server/discover` probe, or a request carrying the revision in
 * its `_meta`) is served by the v2 SDK (`@modelcontextprotocol/server`).
 *
 * `WARRANT_MCP_REVISIONS` (comma-separated, default both) narrows what the
 * process speaks: `2025-11-25` alone makes a v1-only server (it answers a
 * `server/discover` as the v1 SDK does, with an error), `2026-07-28` alone
 * refuses `initialize`.
 */
import { PassThrough, type Readable } from "node:stream";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { McpServer as McpServerV2 } from "@modelcontextprotocol/server";
import { serveStdio, StdioServerTransport as StdioServerTransportV2 } from "@modelcontextprotocol/server/stdio";

export const REVISIONS_ENV = "WARRANT_MCP_REVISIONS";
export const LEGACY_REVISION = "2025-11-25";
export const MODERN_REVISION = "2026-07-28";
export type Revision = typeof LEGACY_REVISION | typeof MODERN_REVISION;

/** The revisions `value` (the environment variable) allows; unset or empty means both. */
export function parseRevisions(value: string | undefined): ReadonlySet<Revision> {
  if (value === undefined || value.trim() === "") return new Set([LEGACY_REVISION, MODERN_REVISION]);
  const revisions = new Set<Revision>();
  for (const part of value.split(",")) {
    const revision = part.trim();
    if (revision !== LEGACY_REVISION && revision !== MODERN_REVISION)
      throw new Error(
        `unknown ${REVISIONS_ENV} entry ${JSON.stringify(revision)} (expected ${LEGACY_REVISION} or ${MODERN_REVISION})`,
      );
    revisions.add(revision);
  }
  return revisions;
}

/** Which SDK serves a connection whose first line is `line`. */
export function servingSdk(line: string, revisions: ReadonlySet<Revision>): "v1" | "v2" {
  if (!revisions.has(MODERN_REVISION)) return "v1";
  if (!revisions.has(LEGACY_REVISION)) return "v2";
  let method: unknown;
  try {
    method = (JSON.parse(line) as { method?: unknown } | null)?.method;
  } catch {
    return "v1";
  }
  return method === "initialize" ? "v1" : "v2";
}

/** Waits for the first line on `input`; the returned stream replays it and carries on with the rest of `input`. */
async function firstLine(input: Readable): Promise<{ line: string; stream: Readable }> {
  const chunks: Buffer[] = [];
  const line = await new Promise<string>((resolve) => {
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString("utf8");
      const end = text.indexOf("\n");
      if (end < 0) return;
      done(text.slice(0, end));
    };
    const onEnd = (): void => done(Buffer.concat(chunks).toString("utf8"));
    const done = (text: string): void => {
      input.off("data", onData);
      input.off("end", onEnd);
      input.pause();
      resolve(text);
    };
    input.on("data", onData);
    input.once("end", onEnd);
  });
  const stream = new PassThrough();
  stream.write(Buffer.concat(chunks));
  input.pipe(stream);
  input.resume();
  return { line, stream };
}

/**
 * The request's `_meta` as a handler of either SDK receives it: the v1 SDK passes it as `extra._meta`, the v2 SDK
 * as `ctx.mcpReq._meta` (with the reserved `io.modelcontextprotocol/*` envelope keys lifted out). Handlers that
 * read the caller from `_meta` (stdio has no token to carry it) must read it through this, or a 2026-07-28 request
 * looks anonymous.
 */
export function requestMeta(extra: unknown): unknown {
  if (typeof extra !== "object" || extra === null) return undefined;
  const request = (extra as { mcpReq?: unknown }).mcpReq;
  if (typeof request === "object" && request !== null) return (request as { _meta?: unknown })._meta;
  return (extra as { _meta?: unknown })._meta;
}

/**
 * Registers the tools (and resources, prompts) on a server of either SDK. `sdk` says which: classes a
 * registration passes (a `ResourceTemplate`) must come from that SDK, which checks them with `instanceof`.
 */
export type ToolRegistrar = (server: McpServer, sdk: "v1" | "v2") => void;

export interface ServedBoth {
  close(): Promise<void>;
}

/**
 * Requests a server answers itself on 2026-07-28, beside the SDK (what the SDK has no runtime for, such as the tasks
 * extension): `claims` decides at once, so the other messages keep their order; `answer` is the JSON-RPC response.
 */
export interface ModernFilter {
  claims(message: { jsonrpc: "2.0"; id?: string | number; method?: string; params?: Record<string, unknown> }): boolean;
  answer(message: { jsonrpc: "2.0"; id?: string | number; method?: string }): Promise<Record<string, unknown>>;
  /** Extensions the server advertises for it in its `server/discover` capabilities. */
  extensions?: Record<string, Record<string, never>>;
}

/** `input` with the lines `filter` claims taken out and answered on stdout; the rest go on to the SDK. */
function filtered(input: Readable, filter: ModernFilter, onError: (error: unknown) => void): Readable {
  const output = new PassThrough();
  let buffered = "";
  input.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let end = buffered.indexOf("\n");
    while (end >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      end = buffered.indexOf("\n");
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        message = undefined;
      }
      const request = message as Parameters<ModernFilter["claims"]>[0] | undefined;
      if (request && typeof request === "object" && filter.claims(request)) {
        filter.answer(request).then((answer) => process.stdout.write(`${JSON.stringify(answer)}\n`), onError);
      } else output.write(`${line}\n`);
    }
  });
  input.on("end", () => output.end(buffered));
  return output;
}

/**
 * Serves `register`'s tools over stdio on whichever revision the client opens
 * with (decided when its first line arrives). The v2 McpServer's `registerTool` takes the same arguments (name,
 * config with zod schemas, handler); the handlers in tools/ read only their
 * arguments, never the SDK-specific second parameter.
 */
export function serveBothRevisions(
  info: { name: string; version: string },
  register: ToolRegistrar,
  revisions: ReadonlySet<Revision> = parseRevisions(process.env[REVISIONS_ENV]),
  onError: (error: unknown) => void = () => undefined,
  modern?: ModernFilter,
): ServedBoth {
  const serving = (async (): Promise<() => Promise<void>> => {
    const { line, stream } = await firstLine(process.stdin);
    if (servingSdk(line, revisions) === "v1") {
      const server = new McpServer(info);
      register(server, "v1");
      await server.connect(new StdioServerTransport(stream, process.stdout));
      return () => server.close();
    }
    const handle = serveStdio(
      () => {
        const server = new McpServerV2(info, {
          supportedProtocolVersions: [MODERN_REVISION],
          ...(modern?.extensions ? { capabilities: { extensions: modern.extensions } } : {}),
        });
        register(server as unknown as McpServer, "v2");
        return server;
      },
      {
        transport: new StdioServerTransportV2(modern ? filtered(stream, modern, onError) : stream, process.stdout),
        legacy: "reject",
        onerror: onError,
      },
    );
    return () => handle.close();
  })();
  serving.catch(onError);
  return {
    close: () =>
      serving.then(
        (close) => close(),
        () => undefined,
      ),
  };
}
