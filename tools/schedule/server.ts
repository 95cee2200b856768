/**
 * `schedule` MCP server over stdio: splits a number of study minutes exactly
 * over a number of days under a daily limit. Stateless and read-only.
 *
 * Run: `npx tsx tools/schedule/server.ts [--help]`.
 * stdout carries only the MCP protocol; every log line goes to stderr.
 */
import { exitOnShutdown, runEntry } from "../shared/stdio-entry.js";
import { serveBothRevisions } from "../shared/revisions.js";
import { parseArgs } from "node:util";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  CalculateScheduleInputSchema,
  CalculateScheduleOutputSchema,
  DAILY_LIMIT_MAX,
  DAYS_MAX,
  TOTAL_MINUTES_MAX,
  calculateSchedule,
  type ScheduleError,
} from "./schedule.js";

const SERVER_NAME = "warrant-schedule";
const SERVER_VERSION = "0.1.0";

const USAGE = `Usage: tsx tools/schedule/server.ts [--help]

MCP server (stdio) that allocates study minutes over days. Tool: calculate_schedule.

Options:
  --help   Print this message and exit.
`;

function log(message: string): void {
  process.stderr.write(`[schedule] ${message}\n`);
}

/** Parses argv; the only option is --help. */
function parseOptions(argv: readonly string[]): { readonly help: boolean } {
  const { values } = parseArgs({
    args: [...argv],
    options: { help: { type: "boolean", short: "h", default: false } },
    strict: true,
    allowPositionals: false,
  });
  return { help: values.help === true };
}

/** A successful tool result carrying the payload both as structured content and as JSON text. */
function jsonResult(payload: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(payload) }], structuredContent: payload };
}

/** A business error: JSON `{code, message}` as text, no structured content. */
function errorResult(error: ScheduleError): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify({ code: error.code, message: error.message }) }],
    isError: true,
  };
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

function registerTools(server: McpServer): void {
  server.registerTool(
    "calculate_schedule",
    {
      title: "Calculate a study schedule",
      description:
        `Splits total_minutes (integer ≤ ${TOTAL_MINUTES_MAX}) over days (integer ≤ ${DAYS_MAX}) ` +
        "as evenly as possible, larger shares first; " +
        `the allocation always sums exactly to total_minutes. Fails with capacity_exceeded when total_minutes > days × daily_limit ` +
        `(daily_limit integer ≤ ${DAILY_LIMIT_MAX}); it never changes days or daily_limit by itself.`,
      inputSchema: CalculateScheduleInputSchema,
      outputSchema: CalculateScheduleOutputSchema,
      annotations: READ_ONLY,
    },
    (args) => {
      const outcome = calculateSchedule(args);
      return outcome.ok ? jsonResult(outcome.schedule) : errorResult(outcome.error);
    },
  );
}

async function main(argv: readonly string[]): Promise<number> {
  let options: { readonly help: boolean };
  try {
    options = parseOptions(argv);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const server = serveBothRevisions({ name: SERVER_NAME, version: SERVER_VERSION }, registerTools);
  exitOnShutdown(() => server.close(), { stdin: true });
  log("ready");
  return 0;
}

runEntry(main, log);
