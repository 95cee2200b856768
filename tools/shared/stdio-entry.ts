/**
 * What every stdio MCP server in tools/ does around its own logic: close when
 * the host goes away, and turn `main`'s result into an exit code.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

/** Closes the server when the host goes away, so the process does not linger. */
export function closeOnShutdown(server: McpServer): void {
  const shutdown = (): void => {
    void server.close().finally(() => process.exit(0));
  };
  process.stdin.once("end", shutdown);
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}

/**
 * Runs an entry point. Setting exitCode (rather than calling exit) lets stdio
 * drain; a connected server keeps the event loop alive by itself.
 */
export function runEntry(main: (argv: readonly string[]) => Promise<number>, log: (message: string) => void): void {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code !== 0) process.exitCode = code;
    },
    (error: unknown) => {
      log(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exitCode = 1;
    },
  );
}
