/**
 * What every MCP server in tools/ does around its own logic: close when the
 * host goes away, and turn `main`'s result into an exit code.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

/**
 * Runs `close` and exits on SIGTERM/SIGINT and, with `stdin`, when the host's
 * end of our stdin closes (the host is gone, even if it was SIGKILLed).
 */
export function exitOnShutdown(close: () => Promise<void>, options: { stdin: boolean }): void {
  const shutdown = (): void => {
    void close().finally(() => process.exit(0));
  };
  if (options.stdin) {
    process.stdin.once("end", shutdown);
    process.stdin.once("close", shutdown);
    process.stdin.resume();
  }
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}

/** Closes a stdio server when the host goes away, so the process does not linger. */
export function closeOnShutdown(server: McpServer): void {
  exitOnShutdown(() => server.close(), { stdin: true });
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
