/**
 * The tool boundary, observed: a `ToolHost` wrapper that records every call
 * that actually reached an MCP server (tool, arguments, outcome) per thread.
 * This is where executed effects are read from, independently of the
 * graph's state; the ledger and the calendar store are read from Postgres.
 */
import type { ToolHost } from "../src/mcp/tool-host.js";

/** One call the boundary saw. Arguments include host-injected ones (user_id, idempotency_key). */
export interface BoundaryCall {
  tool: string;
  args: Record<string, unknown>;
  ok: boolean;
  code: string | null;
}

export interface RecordingToolHost extends ToolHost {
  /** The calls made for a thread, in order; forgets them. */
  take(threadId: string): BoundaryCall[];
}

/** Wraps `tools`; closing the wrapper closes `tools`. */
export function recordingToolHost(tools: ToolHost): RecordingToolHost {
  const calls = new Map<string, BoundaryCall[]>();
  return {
    catalog: () => tools.catalog(),
    get maxTools() {
      return tools.maxTools;
    },
    isHealthy: (server) => tools.isHealthy(server),
    isListed: (name) => tools.isListed(name),
    readResource: (server, uri, options) => tools.readResource(server, uri, options),
    getPrompt: (server, name, args, options) => tools.getPrompt(server, name, args, options),
    close: () => tools.close(),
    async call(tool, args, options) {
      const record: BoundaryCall = { tool: tool.name, args: { ...args }, ok: false, code: "no_answer" };
      const list = calls.get(options.threadId) ?? [];
      list.push(record);
      calls.set(options.threadId, list);
      const result = await tools.call(tool, args, options);
      record.ok = result.ok;
      record.code = result.ok ? null : result.code;
      return result;
    },
    take(threadId) {
      const list = calls.get(threadId) ?? [];
      calls.delete(threadId);
      return list;
    },
  };
}
