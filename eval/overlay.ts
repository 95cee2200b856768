/**
 * A tool host that routes some servers to another host: the shared servers
 * stay up for the whole evaluation, and a task with faults starts fresh
 * processes of only the servers its faults switch (notes, calendar), so a
 * "first N calls" switch counts from that run's start. The catalog keeps the
 * shared host's order, with the faulted servers' tools taken from the fresh host.
 */
import type { ToolHost } from "../src/mcp/tool-host.js";

/** `shared` with the tools of `servers` served by `fresh`; closing it closes `fresh` only. */
export function overlayToolHost(shared: ToolHost, fresh: ToolHost, servers: ReadonlySet<string>): ToolHost {
  const pick = (server: string) => (servers.has(server) ? fresh : shared);
  return {
    catalog: () => {
      const replacements = new Map(fresh.catalog().map((tool) => [tool.name, tool]));
      return shared.catalog().flatMap((tool) => {
        if (!servers.has(tool.server)) return [tool];
        const replacement = replacements.get(tool.name);
        return replacement ? [replacement] : [];
      });
    },
    get maxTools() {
      return shared.maxTools;
    },
    isHealthy: (server) => pick(server).isHealthy(server),
    isListed: (name) => shared.isListed(name) || fresh.isListed(name),
    call: (tool, args, options) => pick(tool.server).call(tool, args, options),
    readResource: (server, uri, options) => pick(server).readResource(server, uri, options),
    getPrompt: (server, name, args, options) => pick(server).getPrompt(server, name, args, options),
    close: () => fresh.close(),
  };
}
