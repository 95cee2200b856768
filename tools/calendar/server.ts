/**
 * `calendar` MCP server over stdio: lists, creates and exports study events,
 * with per-user idempotency keys so a retried write never creates a second
 * event (see the module comment of calendar.ts for the exact rule). Events
 * live in Postgres when a database URL is given (so several processes share
 * them, exactly once per key), else in a JSON store file.
 *
 * Run: `npx tsx tools/calendar/server.ts [--help] [--data PATH] [--database-url URL]`.
 * stdout carries only the MCP protocol; every log line goes to stderr.
 */
import { exitOnShutdown, runEntry } from "../shared/stdio-entry.js";
import { serveBothRevisions } from "../shared/revisions.js";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import {
  CreateStudyEventInputSchema,
  CreateStudyEventOutputSchema,
  GetWriteStatusInputSchema,
  GetWriteStatusOutputSchema,
  ListEventsInputSchema,
  ListEventsOutputSchema,
  type CalendarError,
} from "./calendar.js";
import { eventsToIcs } from "./ics.js";
import { openPostgresStore } from "./postgres-store.js";
import { fileStore, type CalendarStoreBackend, type CreateOutcome, type ListOutcome } from "./store.js";
import { TASKS_EXTENSION, tasksFromEnvironment } from "./tasks.js";
import { CALL_LOG_ENV, CONFIRM_ENV, confirmCreate, confirmSettings, logCall, type ConfirmSettings } from "./confirm.js";
import {
  FAIL_COUNT_ENV,
  FAIL_ENV,
  FAIL_ONCE_ENV,
  parseSwitches,
  STATUS_FAIL_ENV,
  takeFailure,
  type FailSwitches,
} from "./switches.js";

const SERVER_NAME = "warrant-calendar";
const SERVER_VERSION = "0.1.0";
const SERVER_INFO = { name: SERVER_NAME, version: SERVER_VERSION };

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, "..", "..");
const DEFAULT_DATA_PATH = path.join(REPO_ROOT, ".data", "calendar.json");
const DATA_ENV = "WARRANT_CALENDAR_DATA";
/** The host's data directory (warrant.config.json passes WARRANT_DATA_DIR): the store file is calendar.json in it. */
const DATA_DIR_ENV = "WARRANT_CALENDAR_DATA_DIR";
const DATA_FILE = "calendar.json";
const DATABASE_ENV = "WARRANT_CALENDAR_DATABASE_URL";
const SCHEMA_ENV = "WARRANT_CALENDAR_SCHEMA";

const USAGE = `Usage: tsx tools/calendar/server.ts [--help] [--data PATH] [--database-url URL]

MCP server (stdio) over a per-user study calendar, stored in Postgres
(table <schema>.events, unique per user and idempotency key, shared by every
process on that database) or, without a database URL, in one JSON file.
Tools: list_events, create_study_event, get_write_status, export_events_ics.

Options:
  --help               Print this message and exit.
  --database-url URL   Keep events in this Postgres (default: $${DATABASE_ENV});
                       the schema is $${SCHEMA_ENV}, else calendar.
  --data PATH          Without a database: the store file, created on first write
                       (default: $${DATA_ENV}, else ${DATA_FILE} in $${DATA_DIR_ENV}, else
                       ${path.relative(REPO_ROOT, DEFAULT_DATA_PATH)} under the repo root).

Environment (for tests):
  ${FAIL_ENV}=timeout              create_study_event never answers and writes nothing.
  ${FAIL_ENV}=lose_response        create_study_event writes, then the process exits with code 1.
  ${FAIL_ENV}=timeout_after_apply  create_study_event writes, then never answers.
  ${FAIL_ENV}=exit_before_apply    create_study_event exits with code 1 before writing.
  ${FAIL_COUNT_ENV}=N              The fail switch applies to the first N create_study_event
                                   calls of this process only (default: every call), so a
                                   retry can succeed (e.g. after a timeout that applied nothing).
  ${FAIL_ONCE_ENV}=PATH            The fail switch applies once across processes (PATH marks it used).
  ${STATUS_FAIL_ENV}=error         get_write_status answers transient_error (reconciliation tests).
  ${CONFIRM_ENV}=1         create_study_event asks the user to confirm before it writes (elicitation
                                   on 2025-11-25, input_required on 2026-07-28; see confirm.ts).
  ${CALL_LOG_ENV}=PATH     One JSON line per create_study_event request received.
  WARRANT_CALENDAR_TASK_MS=N       On 2026-07-28, create_study_event is a task that writes N ms
                                   later (see tools/calendar/tasks.ts; poll: ..._TASK_POLL_MS).
                                   With ${CONFIRM_ENV}=1 the task asks first (input_required,
                                   answered by tasks/update); WARRANT_CALENDAR_TASK_ASK=late: once it worked.
`;

interface Options {
  readonly help: boolean;
  readonly dataPath: string;
  readonly databaseUrl: string | undefined;
  readonly schema: string;
}

interface ServerState {
  readonly store: CalendarStoreBackend;
  readonly switches: FailSwitches;
  readonly confirm: ConfirmSettings;
}

function log(message: string): void {
  process.stderr.write(`[calendar] ${message}\n`);
}

/**
 * Parses argv; --data wins over the environment (the file, then the directory), which wins over the default.
 * Relative paths resolve against the cwd.
 */
function parseOptions(argv: readonly string[], environment: NodeJS.ProcessEnv): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      help: { type: "boolean", short: "h", default: false },
      data: { type: "string" },
      "database-url": { type: "string" },
    },
    strict: true,
    allowPositionals: false,
  });
  const present = (name: string) => {
    const value = environment[name]?.trim();
    return value === undefined || value === "" ? undefined : value;
  };
  const directory = present(DATA_DIR_ENV);
  const chosen =
    values.data ?? present(DATA_ENV) ?? (directory === undefined ? undefined : path.join(directory, DATA_FILE));
  return {
    help: values.help === true,
    dataPath: chosen === undefined ? DEFAULT_DATA_PATH : path.resolve(chosen),
    databaseUrl: values["database-url"] ?? present(DATABASE_ENV),
    schema: present(SCHEMA_ENV) ?? "calendar",
  };
}

/** The store: Postgres when a database URL is given, else the file. */
async function openStore(options: Options): Promise<CalendarStoreBackend> {
  return options.databaseUrl === undefined
    ? fileStore(options.dataPath)
    : openPostgresStore(options.databaseUrl, options.schema);
}

/** A successful tool result carrying the payload both as structured content and as JSON text. */
function jsonResult(payload: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(payload) }], structuredContent: payload };
}

/** A business error: JSON `{code, message}` as text, no structured content. */
function errorResult(error: CalendarError): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify({ code: error.code, message: error.message }) }],
    isError: true,
  };
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A promise that never settles: the request stays unanswered until the client gives up. */
function never(): Promise<never> {
  return new Promise<never>(() => undefined);
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const IDEMPOTENT_WRITE = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;

function registerListEvents(server: McpServer, state: ServerState): void {
  server.registerTool(
    "list_events",
    {
      title: "List calendar events",
      description:
        "Lists the caller's events, sorted by start. " +
        "Optional: one calendar, and a window (from/to, ISO 8601 with offset) of which events must overlap part.",
      inputSchema: ListEventsInputSchema,
      outputSchema: ListEventsOutputSchema,
      annotations: READ_ONLY,
    },
    async (args) => {
      const outcome = await listOrFail(state, "list_events", args);
      return outcome.ok ? jsonResult(outcome.result) : errorResult(outcome.error);
    },
  );
}

/** Lists through the store; a store failure is a transient error. */
async function listOrFail(
  state: ServerState,
  tool: string,
  args: z.infer<typeof ListEventsInputSchema>,
): Promise<ListOutcome> {
  try {
    return await state.store.list(args);
  } catch (error) {
    log(`${tool}: cannot read store: ${describeError(error)}`);
    return { ok: false, error: { code: "transient_error", message: "calendar store unavailable" } };
  }
}

/** Structured result of `export_events_ics`. */
const ExportIcsOutputSchema = z.object({ ics: z.string(), event_count: z.number().int().min(0) });

function registerExportEventsIcs(server: McpServer, state: ServerState): void {
  server.registerTool(
    "export_events_ics",
    {
      title: "Export calendar events as iCalendar",
      description:
        "The caller's events (optionally one calendar and a from/to window, as list_events) " +
        "as one iCalendar (.ics, RFC 5545) document, for import into another calendar app.",
      inputSchema: ListEventsInputSchema,
      outputSchema: ExportIcsOutputSchema,
      annotations: READ_ONLY,
    },
    async (args) => {
      const outcome = await listOrFail(state, "export_events_ics", args);
      if (!outcome.ok) return errorResult(outcome.error);
      return jsonResult({ ics: eventsToIcs(outcome.result.events), event_count: outcome.result.events.length });
    },
  );
}

function registerCreateStudyEvent(server: McpServer, state: ServerState, sdk: "v1" | "v2"): void {
  server.registerTool(
    "create_study_event",
    {
      title: "Create a study event",
      description:
        "Creates one study event (at most 24 h, end after start) in the caller's calendar. The idempotency_key makes retries safe: " +
        "repeating a call with the same key and arguments returns the original event with replayed: true and creates nothing; " +
        'the same key with different arguments fails with invalid_arguments ("idempotency key reused with different arguments"). ' +
        "After a timeout, check get_write_status with the same key before retrying with a new one.",
      inputSchema: CreateStudyEventInputSchema,
      outputSchema: CreateStudyEventOutputSchema,
      annotations: IDEMPOTENT_WRITE,
    },
    async (args, extra) => {
      logCall(state.confirm, args.idempotency_key, extra);
      const confirmation = await confirmCreate(state.confirm, sdk, extra, args.title);
      // The v2 SDK sends the input_required answer as it is (the cast: the v1 handler type knows no such result).
      if (confirmation.kind === "ask") return confirmation.result as unknown as CallToolResult;
      if (confirmation.kind === "refused")
        return errorResult({ code: "tool_failed", message: `the event was not confirmed (${confirmation.action})` });
      const failMode = takeFailure(state.switches);
      if (failMode === "exit_before_apply") {
        log("create_study_event: exiting before writing (WARRANT_CALENDAR_FAIL=exit_before_apply)");
        process.exit(1);
      }
      if (failMode === "timeout") {
        log("create_study_event: not answering and not writing (WARRANT_CALENDAR_FAIL=timeout)");
        return never();
      }
      let plan: CreateOutcome;
      try {
        plan = await state.store.create(args);
      } catch (error) {
        log(`create_study_event: store update failed: ${describeError(error)}`);
        // The file store fails before its rename (nothing applied); a database may fail after its commit (a connection
        // lost mid-statement): then the outcome is unknown, and the caller must ask get_write_status, not retry blindly.
        return state.store.failureMayHaveApplied
          ? errorResult({
              code: "outcome_unknown",
              message: "calendar store unavailable; check get_write_status with the same key before retrying",
            })
          : errorResult({ code: "transient_error", message: "calendar store unavailable; nothing was written" });
      }
      if (plan.kind === "created") log(`create_study_event: created ${plan.result.event.event_id} for ${args.user_id}`);
      if (failMode === "lose_response") {
        log("create_study_event: exiting before answering (WARRANT_CALENDAR_FAIL=lose_response)");
        process.exit(1);
      }
      if (failMode === "timeout_after_apply") {
        log("create_study_event: applied, not answering (WARRANT_CALENDAR_FAIL=timeout_after_apply)");
        return never();
      }
      return plan.kind === "rejected" ? errorResult(plan.error) : jsonResult(plan.result);
    },
  );
}

function registerGetWriteStatus(server: McpServer, state: ServerState): void {
  server.registerTool(
    "get_write_status",
    {
      title: "Get write status",
      description:
        "Reconciliation after a lost or timed-out create_study_event: " +
        "whether a write with this idempotency key was applied for the caller, and its event if so.",
      inputSchema: GetWriteStatusInputSchema,
      outputSchema: GetWriteStatusOutputSchema,
      annotations: READ_ONLY,
    },
    async (args) => {
      if (state.switches.statusFails) {
        log(`get_write_status: failing (${STATUS_FAIL_ENV}=error)`);
        return errorResult({ code: "transient_error", message: "write status unavailable" });
      }
      try {
        return jsonResult(await state.store.status(args));
      } catch (error) {
        log(`get_write_status: cannot read store: ${describeError(error)}`);
        return errorResult({ code: "transient_error", message: "calendar store unavailable" });
      }
    },
  );
}

function registerTools(server: McpServer, state: ServerState, sdk: "v1" | "v2"): void {
  registerListEvents(server, state);
  registerCreateStudyEvent(server, state, sdk);
  registerGetWriteStatus(server, state);
  registerExportEventsIcs(server, state);
}

async function main(argv: readonly string[]): Promise<number> {
  let options: Options;
  try {
    options = parseOptions(argv, process.env);
  } catch (error) {
    process.stderr.write(`${describeError(error)}\n\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(USAGE);
    return 0;
  }

  let switches: FailSwitches;
  let confirm: ConfirmSettings;
  try {
    switches = parseSwitches(process.env);
    confirm = confirmSettings(process.env);
  } catch (error) {
    log(describeError(error));
    return 1;
  }

  let store: CalendarStoreBackend;
  let eventCount: number;
  try {
    // Fail fast on a corrupt store or an unreachable database rather than on the first call; a missing file is fine.
    store = await openStore(options);
    eventCount = await store.count().catch(async (error: unknown) => {
      await store.close();
      throw error;
    });
  } catch (error) {
    log(`cannot start: ${describeError(error).split("\n").join(" ")}`);
    return 1;
  }

  const state: ServerState = { store, switches, confirm };
  const { failMode, failuresLeft } = switches;
  // A bad task setting is fatal (runEntry logs it): tests only.
  const result = (plan: CreateOutcome) =>
    plan.kind === "rejected" ? errorResult(plan.error) : jsonResult(plan.result);
  const tasks = tasksFromEnvironment(process.env, options.dataPath, store, result, log, confirm);
  await tasks?.resume();
  const server = serveBothRevisions(
    SERVER_INFO,
    (server, sdk) => registerTools(server, state, sdk),
    undefined,
    (error) => log(`mcp: ${describeError(error)}`),
    tasks ? { ...tasks, extensions: { [TASKS_EXTENSION]: {} } } : undefined,
  );
  exitOnShutdown(
    async () => {
      tasks?.close();
      await server.close();
      await store.close();
    },
    { stdin: true },
  );
  const failing = Number.isFinite(failuresLeft) ? ` for ${failuresLeft} call(s)` : "";
  const mode = failMode === undefined ? "" : `, fail mode ${failMode}${failing}`;
  log(`ready: ${store.label} (${eventCount} events)${mode}${confirm.confirm ? ", confirming creates" : ""}`);
  return 0;
}

runEntry(main, log);
