/** An in-process caseops server for tests, recording the tenant of every MCP session it opens. */
import { startCaseopsServer, type CaseopsServerHandle } from "../../../tools/caseops/server.js";

export async function countingCaseops(
  secret: Uint8Array,
  options: { sessionIdleMs?: number } = {},
): Promise<{ server: CaseopsServerHandle; opened: string[] }> {
  const opened: string[] = [];
  const server = await startCaseopsServer({
    port: 0,
    host: "127.0.0.1",
    secret,
    audience: "caseops",
    ...options,
    log: (line) => {
      const match = /^session opened for tenant (\S+)/.exec(line);
      if (match?.[1]) opened.push(match[1]);
    },
  });
  return { server, opened };
}
