/**
 * `notes` MCP server over stdio: searches and reads the shipped course notes,
 * enforcing the access rule itself from the principal directory (it never
 * trusts the host to have filtered anything). It also serves each course's
 * outline as the resource `notes://courses/{course}/outline` and the prompt
 * `quiz_from_notes(course_id[, questions])`; for those the caller's identity
 * comes from the request's `_meta` (`warrant/user_id`, `warrant/tenant`),
 * which the host sets, and is checked against the same directory.
 *
 * Run: `npx tsx tools/notes/server.ts [--help] [--data PATH] [--principals PATH]`.
 * stdout carries only the MCP protocol; every log line goes to stderr.
 */
import { exitOnShutdown, runEntry } from "../shared/stdio-entry.js";
import { requestMeta, serveBothRevisions } from "../shared/revisions.js";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ResourceTemplate as ResourceTemplateV2 } from "@modelcontextprotocol/server";
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type GetPromptResult,
  type ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import {
  ACCESS_DENIED_TEXT,
  ReadNoteInputSchema,
  ReadNoteOutputSchema,
  SearchNotesInputSchema,
  SearchNotesOutputSchema,
  buildSearchIndex,
  findPrincipal,
  loadCorpus,
  loadPrincipalDirectory,
  loadSynonyms,
  readNote,
  searchNotes,
  type Corpus,
  type Principal,
  type PrincipalDirectory,
  type SearchIndex,
} from "./corpus.js";
import {
  COURSE_UNAVAILABLE,
  META_TENANT,
  META_USER_ID,
  MAX_QUIZ_QUESTIONS,
  OUTLINE_URI_TEMPLATE,
  callerFromMeta,
  courseOutline,
  questionCount,
  quizPromptText,
  type Outline,
} from "./outline.js";

const SERVER_NAME = "warrant-notes";
const SERVER_VERSION = "0.1.0";

// Defaults are resolved from this file's location so the server works from any working directory.
const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = path.resolve(HERE, "..", "..");
const DEFAULT_DATA_PATH = path.join(HERE, "data", "notes.json");
const DEFAULT_SYNONYMS_PATH = path.join(HERE, "data", "synonyms.json");
const DEFAULT_PRINCIPALS_PATH = path.join(REPO_ROOT, "src", "domains", "dev-principals.json");

const USAGE = `Usage: tsx tools/notes/server.ts [--help] [--data PATH] [--principals PATH] [--synonyms PATH]

MCP server (stdio) over the course-notes corpus. Tools: search_notes, read_note.
Resource template: notes://courses/{course}/outline. Prompt: quiz_from_notes.

Options:
  --help             Print this message and exit.
  --data PATH        Corpus JSON (default: ${path.relative(REPO_ROOT, DEFAULT_DATA_PATH)}).
  --principals PATH  Principal directory JSON (default: ${path.relative(REPO_ROOT, DEFAULT_PRINCIPALS_PATH)}).
  --synonyms PATH    Per-course synonym table JSON (default: ${path.relative(REPO_ROOT, DEFAULT_SYNONYMS_PATH)}).

Environment (for tests):
  WARRANT_NOTES_DELAY_MS=N   Sleep N ms before answering each read_note call.
  WARRANT_NOTES_DELAY_CALLS=K  With WARRANT_NOTES_DELAY_MS: delay only the first K
                             read_note calls (a transient slowness a retry recovers).
  WARRANT_NOTES_FAIL_START=1 Exit with code 1 before connecting.
`;

interface Options {
  readonly help: boolean;
  readonly dataPath: string;
  readonly principalsPath: string;
  readonly synonymsPath: string;
}

interface ServerState {
  readonly corpus: Corpus;
  readonly index: SearchIndex;
  readonly directory: PrincipalDirectory;
  readonly readDelayMs: number;
  /** How many read_note calls are still delayed; Infinity when every call is. */
  delayedReads: { left: number };
}

function log(message: string): void {
  process.stderr.write(`[notes] ${message}\n`);
}

/** Parses argv; relative paths are taken relative to the working directory, as users expect of CLI flags. */
function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      help: { type: "boolean", short: "h", default: false },
      data: { type: "string" },
      principals: { type: "string" },
      synonyms: { type: "string" },
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    help: values.help === true,
    dataPath: values.data === undefined ? DEFAULT_DATA_PATH : path.resolve(values.data),
    principalsPath: values.principals === undefined ? DEFAULT_PRINCIPALS_PATH : path.resolve(values.principals),
    synonymsPath: values.synonyms === undefined ? DEFAULT_SYNONYMS_PATH : path.resolve(values.synonyms),
  };
}

/** `WARRANT_NOTES_DELAY_MS` as a positive integer; anything else means no delay. */
function readDelayFromEnvironment(value: string | undefined): number {
  if (value === undefined || value === "") return 0;
  if (!/^[1-9][0-9]*$/.test(value)) {
    log(`ignoring WARRANT_NOTES_DELAY_MS=${JSON.stringify(value)}: not a positive integer`);
    return 0;
  }
  return Number(value);
}

/** `WARRANT_NOTES_DELAY_CALLS` as a positive integer; anything else means every call is delayed. */
function delayedCallsFromEnvironment(value: string | undefined): number {
  if (value === undefined || value === "") return Number.POSITIVE_INFINITY;
  if (!/^[1-9][0-9]*$/.test(value)) {
    log(`ignoring WARRANT_NOTES_DELAY_CALLS=${JSON.stringify(value)}: not a positive integer`);
    return Number.POSITIVE_INFINITY;
  }
  return Number(value);
}

/** A successful tool result carrying the payload both as structured content and as JSON text. */
function jsonResult(payload: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(payload) }], structuredContent: payload };
}

/** The one error result for missing and forbidden notes alike (see ACCESS_DENIED in corpus.ts). */
function accessDeniedResult(): CallToolResult {
  return { content: [{ type: "text", text: ACCESS_DENIED_TEXT }], isError: true };
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

function registerSearchNotes(server: McpServer, state: ServerState): void {
  server.registerTool(
    "search_notes",
    {
      title: "Search course notes",
      description:
        "Full-text search over the course notes the caller may read. " +
        "Returns the best-matching notes (id, source, page, score, snippet), best first.",
      inputSchema: SearchNotesInputSchema,
      outputSchema: SearchNotesOutputSchema,
      annotations: READ_ONLY,
    },
    (args) => {
      const principal = findPrincipal(state.directory, args.user_id);
      return jsonResult(
        searchNotes(state.index, principal, { query: args.query, limit: args.limit, course: args.course }),
      );
    },
  );
}

function registerReadNote(server: McpServer, state: ServerState): void {
  server.registerTool(
    "read_note",
    {
      title: "Read a course note",
      description: "Returns the full text of one course note by id, if the caller may read it.",
      inputSchema: ReadNoteInputSchema,
      outputSchema: ReadNoteOutputSchema,
      annotations: READ_ONLY,
    },
    async (args) => {
      if (state.readDelayMs > 0 && state.delayedReads.left > 0) {
        state.delayedReads.left -= 1;
        // Tests wait for this line to know a call is in flight (e.g. to kill the host mid-call).
        log(`read_note delayed ${state.readDelayMs} ms`);
        await sleep(state.readDelayMs);
      }
      const view = readNote(state.index, findPrincipal(state.directory, args.user_id), args.note_id);
      return view === undefined ? accessDeniedResult() : jsonResult(view);
    },
  );
}

/**
 * The one refusal for a course that is missing and one the caller may not
 * see: same code, message and data, so the two cannot be told apart.
 */
function courseUnavailable(): McpError {
  return new McpError(ErrorCode.InvalidParams, COURSE_UNAVAILABLE.message, { ...COURSE_UNAVAILABLE });
}

/** The caller named by the request's `_meta`; a request without one is refused before anything is looked up. */
function requireCaller(state: ServerState, meta: unknown): Principal | undefined {
  const caller = callerFromMeta(meta, state.directory);
  if (caller.kind === "anonymous") {
    throw new McpError(
      ErrorCode.InvalidRequest,
      `caller identity required: send _meta "${META_USER_ID}" and "${META_TENANT}"`,
    );
  }
  return caller.principal;
}

/** The outline the caller may see, or the uniform refusal. */
function outlineFor(state: ServerState, meta: unknown, course: unknown): Outline {
  const principal = requireCaller(state, meta);
  const outline = typeof course === "string" ? courseOutline(state.corpus, principal, course) : undefined;
  if (outline === undefined) throw courseUnavailable();
  return outline;
}

function registerOutline(server: McpServer, state: ServerState, sdk: "v1" | "v2"): void {
  // Each SDK recognizes only its own template class (`instanceof`); the v2 one has the same shape.
  const template =
    sdk === "v2"
      ? (new ResourceTemplateV2(OUTLINE_URI_TEMPLATE, { list: undefined }) as unknown as ResourceTemplate)
      : new ResourceTemplate(OUTLINE_URI_TEMPLATE, { list: undefined });
  server.registerResource(
    "course_outline",
    // No listing: which courses exist depends on who asks, and a list request need not say.
    template,
    {
      title: "Course outline",
      description:
        "A course's title and the notes the caller may read (ids and titles), in syllabus order. Only for enrolled callers.",
      mimeType: "application/json",
    },
    (uri, variables, extra): ReadResourceResult => {
      const outline = outlineFor(state, requestMeta(extra), variables["course"]);
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(outline) }] };
    },
  );
}

function registerQuizPrompt(server: McpServer, state: ServerState): void {
  server.registerPrompt(
    "quiz_from_notes",
    {
      title: "Quiz from course notes",
      description:
        "Instructions for writing quiz questions grounded only in one course's notes, " +
        `each citing a note id (1–${MAX_QUIZ_QUESTIONS} questions, default 5).`,
      // Loose on purpose: a malformed course id gets the same refusal as a missing or forbidden one.
      argsSchema: {
        course_id: z.string().max(64).describe("Course code, e.g. cs301."),
        questions: z.string().max(2).optional().describe(`How many questions, 1–${MAX_QUIZ_QUESTIONS} (default 5).`),
      },
    },
    (args, extra): GetPromptResult => {
      const outline = outlineFor(state, requestMeta(extra), args.course_id);
      const questions = questionCount(args.questions);
      if (questions === undefined)
        throw new McpError(ErrorCode.InvalidParams, `questions must be a whole number from 1 to ${MAX_QUIZ_QUESTIONS}`);
      return {
        description: `Quiz of ${questions} question(s) from the ${outline.course} notes`,
        messages: [{ role: "user", content: { type: "text", text: quizPromptText(outline, questions) } }],
      };
    },
  );
}

function registerTools(server: McpServer, state: ServerState, sdk: "v1" | "v2"): void {
  registerSearchNotes(server, state);
  registerReadNote(server, state);
  registerOutline(server, state, sdk);
  registerQuizPrompt(server, state);
}

async function loadState(options: Options): Promise<ServerState> {
  const [corpus, directory, synonyms] = await Promise.all([
    loadCorpus(options.dataPath),
    loadPrincipalDirectory(options.principalsPath),
    loadSynonyms(options.synonymsPath),
  ]);
  return {
    corpus,
    index: buildSearchIndex(corpus, synonyms),
    directory,
    readDelayMs: readDelayFromEnvironment(process.env["WARRANT_NOTES_DELAY_MS"]),
    delayedReads: { left: delayedCallsFromEnvironment(process.env["WARRANT_NOTES_DELAY_CALLS"]) },
  };
}

async function main(argv: readonly string[]): Promise<number> {
  let options: Options;
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
  if (process.env["WARRANT_NOTES_FAIL_START"] === "1") {
    log("start-up failure forced by WARRANT_NOTES_FAIL_START=1");
    return 1;
  }

  let state: ServerState;
  try {
    state = await loadState(options);
  } catch (error) {
    log(`cannot start: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }

  const server = serveBothRevisions({ name: SERVER_NAME, version: SERVER_VERSION }, (server, sdk) =>
    registerTools(server, state, sdk),
  );
  exitOnShutdown(() => server.close(), { stdin: true });
  log(`ready: ${state.index.notes.length} notes, ${state.directory.principals.length} principals`);
  return 0;
}

runEntry(main, log);
