/**
 * Secrets stay out (issue 11, item 2), end to end: the API server as a child
 * process on real Postgres, the real notes server on a corpus of our own
 * (`--data`) whose note carries fake keys, the real calendar, and the model
 * planner against a scripted OpenAI-compatible endpoint that proposes
 * arguments carrying a key; a reviewer's edit carries another. Afterwards
 * every column of every table in the database (checkpoint blobs decoded),
 * `pg_dump`'s output, the server's and its children's logs and everything
 * the model was sent are searched for each key: none is anywhere, while the
 * `secret_redacted` audit events say where each redaction happened, and the
 * calendar event the write created holds the marker, not the key.
 *
 * OAuth credentials (issue 25): a `client_credentials` server of the test's
 * own on loopback whose tools echo the call's access token and the client's
 * secret in a result and in an error message. Opaque values no pattern
 * knows: the host remembers each credential it obtains and every scanner
 * redacts it by value, so neither reaches the model, the tables or the logs.
 * (Refresh tokens and PKCE verifiers, which only the authorization_code
 * grant has, are covered the same way in test/unit/secrets-known.test.ts.)
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../src/env.js";
import { MARKER_PATTERN } from "../../src/secrets/scanner.js";
import { startFakeOpenAI, type FakeOpenAI, type ScriptedCompletion } from "./support/fake-openai.js";
import {
  startClientCredentialsServers,
  type ClientCredentialsServers,
} from "./support/oauth-client-credentials-servers.js";
import { createServerSandbox, type ServerProcess, type ServerSandbox } from "./support/server-process.js";

const run = promisify(execFile);
const suffix = randomBytes(12).toString("hex");
/** Fake secrets, unique to this test run so nothing else can contain them. */
const NOTE_KEY = `sk-live-NOTE${suffix}`;
const NOTE_AWS = `AKIA${suffix.slice(0, 16).toUpperCase()}`;
const SOURCE_ID = `cs301/vault-${suffix}`;
const ARGUMENT_KEY = `sk-proj-ARG${suffix}`;
const EDIT_KEY = `sk-ant-EDIT${suffix}`;
/** An opaque client secret (no built-in pattern's shape), given to the server through its environment only. */
const CLIENT_SECRET = `opaque${suffix}client`;
const SECRETS: Record<string, string> = { NOTE_KEY, NOTE_AWS, SOURCE_ID, ARGUMENT_KEY, EDIT_KEY, CLIENT_SECRET };
const NOTE_ID = "cs301.deploy-keys";

const USAGE = { prompt_tokens: 50, completion_tokens: 20 };
const reply = (calls: { id: string; name: string; args: Record<string, unknown> }[]): ScriptedCompletion => ({
  kind: "completion",
  tool_calls: calls.map((call) => ({ id: call.id, name: call.name, arguments: JSON.stringify(call.args) })),
  finish_reason: "tool_calls",
  usage: USAGE,
});
const BOOKING = {
  title: "Rotate the deploy keys",
  start: "2026-12-03T18:00:00+01:00",
  end: "2026-12-03T19:00:00+01:00",
  timezone: "Europe/Berlin",
  calendar: "study",
};

let sandbox: ServerSandbox;
let fake: FakeOpenAI;
let server: ServerProcess;
let oauth: ClientCredentialsServers;

/** The shipped config with only the notes (on our corpus) and calendar servers, and `source_id` marked sensitive for the notes tools. */
async function writeConfig(directory: string, corpusPath: string): Promise<string> {
  const shipped = JSON.parse(await fs.readFile(path.join(REPO_ROOT, "warrant.config.json"), "utf8")) as {
    servers: Record<string, { args: string[] }>;
    tools: Record<string, { server: string; sensitive?: string[] }>;
  };
  const notes = shipped.servers["notes"];
  if (!notes) throw new Error("the shipped config has no notes server");
  const reports = {
    transport: "http",
    url: oauth.mcpUrl,
    audience: "reports",
    auth: {
      type: "oauth",
      grant: "client_credentials",
      client_id: "warrant",
      client_secret: "${WARRANT_TEST_CC_SECRET}",
      issuer: oauth.issuer,
    },
  };
  const servers = {
    notes: { ...notes, args: [...notes.args, "--data", corpusPath] },
    calendar: shipped.servers["calendar"],
    reports,
  };
  const tools: Record<string, { server: string; sensitive?: string[] }> = Object.fromEntries(
    Object.entries(shipped.tools).filter(
      ([, contract]) => contract.server === "notes" || contract.server === "calendar",
    ),
  );
  for (const name of ["leak", "leak_error"])
    tools[name] = { server: "reports", risk: "read", timeout_ms: 10_000 } as { server: string };
  for (const name of ["search_notes", "read_note"]) tools[name] = { ...tools[name]!, sensitive: ["source_id"] };
  const file = path.join(directory, "secrets.config.json");
  await fs.writeFile(file, JSON.stringify({ ...shipped, servers, tools }));
  return file;
}

async function writeCorpus(directory: string): Promise<string> {
  const shipped = JSON.parse(await fs.readFile(path.join(REPO_ROOT, "tools/notes/data/notes.json"), "utf8")) as {
    version: number;
    courses: unknown[];
  };
  const note = {
    note_id: NOTE_ID,
    source_id: SOURCE_ID,
    course: "cs301",
    title: "Rotating deploy keys",
    page: 1,
    released: true,
    text:
      "Deploy keys are rotated every term. " +
      `The current key is ${NOTE_KEY} and the bucket key is ${NOTE_AWS}; rotate both before the exam.`,
  };
  const file = path.join(directory, "notes.json");
  await fs.writeFile(file, JSON.stringify({ version: shipped.version, courses: shipped.courses, notes: [note] }));
  return file;
}

/**
 * Every value of every column of every table outside the system schemas, as text (bytea decoded, so checkpoint
 * blobs are searched as their bytes).
 */
async function everyStoredValue(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const columns = await client.query<{
      table_schema: string;
      table_name: string;
      column_name: string;
      data_type: string;
    }>(
      `select c.table_schema, c.table_name, c.column_name, c.data_type
         from information_schema.columns c join information_schema.tables t using (table_schema, table_name)
        where t.table_type = 'BASE TABLE' and c.table_schema not in ('pg_catalog', 'information_schema')`,
    );
    expect(columns.rows.map((row) => `${row.table_schema}.${row.table_name}`)).toEqual(
      expect.arrayContaining([
        "public.checkpoint_blobs",
        "public.checkpoint_writes",
        "warrant.ledger",
        "warrant.audit_events",
        "calendar.events",
      ]),
    );
    const parts: string[] = [];
    for (const column of columns.rows) {
      const quoted = `"${column.column_name.replaceAll('"', '""')}"`;
      const value = column.data_type === "bytea" ? `encode(${quoted}, 'escape')` : `${quoted}::text`;
      const table = `"${column.table_schema}"."${column.table_name}"`;
      const rows = await client.query<{ value: string | null }>(`select ${value} as value from ${table}`);
      for (const row of rows.rows) if (row.value !== null) parts.push(row.value);
    }
    return parts.join("\n");
  } finally {
    await client.end();
  }
}

function expectNoSecret(where: string, text: string): void {
  for (const [name, secret] of Object.entries(SECRETS))
    expect(text.includes(secret), `${name} found in ${where}`).toBe(false);
}

type AuditRow = { kind: string; node: string; tool: string | null; subject: string; detail: string };
type Detail = { where: string; count: number; redactions: { path: string; kind: string; marker: string }[] };

beforeAll(async () => {
  sandbox = await createServerSandbox();
  fake = await startFakeOpenAI();
  oauth = await startClientCredentialsServers([{ client_id: "warrant", client_secret: CLIENT_SECRET }]);
  const config = await writeConfig(sandbox.dataDir, await writeCorpus(sandbox.dataDir));
  server = await sandbox.start({
    WARRANT_CONFIG: config,
    WARRANT_PLANNER: "model",
    WARRANT_MODEL: "fake-model",
    OPENAI_BASE_URL: fake.baseUrl,
    WARRANT_TEST_CC_SECRET: CLIENT_SECRET,
  });
}, 120_000);

afterAll(async () => {
  await sandbox?.cleanup();
  await fake?.close();
  await oauth?.close();
}, 60_000);

describe("secrets stay out", () => {
  it("keeps keys from notes, tool results, model arguments and a reviewer's edit out of the model, the database and the logs", async () => {
    const alice = await sandbox.client(server, "alice");
    const thread = await alice.threads.create();
    fake.enqueue(
      reply([
        { id: "call_search", name: "search_notes", args: { query: "rotating deploy keys" } },
        { id: "call_read", name: "read_note", args: { note_id: NOTE_ID } },
        { id: "call_leak", name: "search_notes", args: { query: `where is ${ARGUMENT_KEY}` } },
      ]),
      reply([
        { id: "call_book", name: "create_study_event", args: { ...BOOKING, description: `rotate ${ARGUMENT_KEY}` } },
      ]),
    );
    const paused = (await alice.runs.wait(thread.thread_id, "agent", {
      input: {
        messages: [{ role: "user", content: "What do my notes say about rotating deploy keys? Book an hour for it." }],
      },
    })) as {
      __interrupt__?: { value: { action_requests: { args: Record<string, unknown> }[] } }[];
    };
    // The card shows the reviewer the marker the write would receive.
    const card = paused.__interrupt__?.[0]?.value.action_requests[0]?.args;
    expect(card?.["description"]).toMatch(/^rotate \[redacted:api_key:[0-9a-f]{12}\]$/);

    fake.enqueue({
      kind: "completion",
      content: JSON.stringify({
        answer: "Booked; the note says to rotate both keys.",
        citations: [],
        abstained: false,
      }),
      finish_reason: "stop",
      usage: USAGE,
    });
    const edited = { ...BOOKING, description: `rotate with ${EDIT_KEY}` };
    const done = (await alice.runs.wait(thread.thread_id, "agent", {
      command: {
        resume: { decisions: [{ type: "edit", edited_action: { name: "create_study_event", args: edited } }] },
      },
    })) as { status?: string; ledger?: { tool: string; status: string }[] };
    expect(done.status).toBe("completed");
    expect(done.ledger?.filter((row) => row.tool === "create_study_event").map((row) => row.status)).toEqual([
      "succeeded",
    ]);
    expect(fake.pending()).toBe(0);

    // The write received the marker: the calendar holds no secret, and the event exists.
    const events = await sandbox.calendarEvents();
    expect(events).toEqual([
      expect.objectContaining({
        title: BOOKING.title,
        description: expect.stringMatching(/^rotate with \[redacted:api_key:[0-9a-f]{12}\]$/),
      }),
    ]);

    // What the model was sent: the note's text with markers, never a key.
    const sent = JSON.stringify(fake.requests.map((request) => request.body));
    expectNoSecret("the model's requests", sent);
    expect(sent).toContain("Deploy keys are rotated every term. The current key is [redacted:api_key:");
    expect(sent).toMatch(/\[redacted:aws_key:[0-9a-f]{12}\]/);

    // Where each redaction happened, in the run's audit chain; never a value.
    const database = new pg.Client({ connectionString: sandbox.databaseUrl });
    await database.connect();
    let audit: AuditRow[];
    try {
      audit = (
        await database.query<AuditRow>(
          "select kind, node, tool, subject, detail from warrant.audit_events where kind = 'secret_redacted' order by seq",
        )
      ).rows;
    } finally {
      await database.end();
    }
    const sites = audit.map((row) => {
      const detail = JSON.parse(row.detail) as Detail;
      return {
        node: row.node,
        tool: row.tool,
        where: detail.where,
        paths: detail.redactions.map((entry) => `${entry.path}:${entry.kind}`).sort(),
      };
    });
    expect(sites).toEqual(
      expect.arrayContaining([
        { node: "plan", tool: "search_notes", where: "arguments", paths: ["arguments.query:api_key"] },
        { node: "plan", tool: "create_study_event", where: "arguments", paths: ["arguments.description:api_key"] },
        {
          node: "execute",
          tool: "read_note",
          where: "result",
          paths: expect.arrayContaining([
            "result.structuredContent.source_id:sensitive",
            "result.structuredContent.text:api_key",
            "result.structuredContent.text:aws_key",
          ]),
        },
        {
          node: "execute",
          tool: "search_notes",
          where: "result",
          paths: expect.arrayContaining([expect.stringMatching(/^result\.structuredContent\..*source_id:sensitive$/)]),
        },
        {
          node: "human_review",
          tool: "create_study_event",
          where: "resume",
          paths: ["resume.decisions[0].edited_action.args.description:api_key"],
        },
      ]),
    );
    // One key, one marker: the argument key has the same marker in the search and in the booking.
    const markerOf = (tool: string) =>
      audit
        .filter((row) => row.tool === tool && row.node === "plan")
        .map((row) => (JSON.parse(row.detail) as Detail).redactions[0]?.marker);
    expect(markerOf("search_notes")[0]).toMatch(MARKER_PATTERN);
    expect(markerOf("search_notes")[0]).toBe(markerOf("create_study_event")[0]);

    // Nowhere at rest: every column of every table, checkpoint blobs and writes decoded; and pg_dump's own output.
    expectNoSecret("the database", await everyStoredValue(sandbox.databaseUrl));
    const dump = await run("pg_dump", ["--no-owner", sandbox.databaseUrl], { maxBuffer: 256 * 1024 * 1024 });
    expect(dump.stdout).toContain("secret_redacted");
    expectNoSecret("pg_dump", dump.stdout);

    // Nor in any log line of the server and its MCP children.
    expect(server.stderr()).toContain("warrant-server:");
    expectNoSecret("the server's logs", server.stderr());
  }, 180_000);

  it("keeps OAuth access tokens and client secrets out of results, errors, the model, the database and the logs", async () => {
    const alice = await sandbox.client(server, "alice");
    const thread = await alice.threads.create();
    fake.enqueue(
      reply([
        { id: "call_leak_result", name: "leak", args: {} },
        { id: "call_leak_error", name: "leak_error", args: {} },
      ]),
      {
        kind: "completion",
        content: JSON.stringify({ answer: "Checked the reports server.", citations: [], abstained: false }),
        finish_reason: "stop",
        usage: USAGE,
      },
    );
    const done = (await alice.runs.wait(thread.thread_id, "agent", {
      input: { messages: [{ role: "user", content: "Check the reports server." }] },
    })) as { status?: string; ledger?: { tool: string; status: string; error_code: string | null }[] };
    expect(done.status).toBe("completed");
    expect(done.ledger?.map((row) => [row.tool, row.status]).sort()).toEqual([
      ["leak", "succeeded"],
      ["leak_error", "failed"],
    ]);
    expect(fake.pending()).toBe(0);
    // The server saw the deployment's tokens: those are the values to look for.
    const tokens = oauth.issued.map((entry) => entry.token);
    expect(tokens.length).toBeGreaterThanOrEqual(1);
    expect(oauth.seen.length).toBeGreaterThanOrEqual(2);
    const credentials = {
      CLIENT_SECRET,
      ...Object.fromEntries(tokens.map((token, index) => [`token ${index}`, token])),
    };
    const expectNoCredential = (where: string, text: string) => {
      for (const [name, value] of Object.entries(credentials))
        expect(text.includes(value), `${name} found in ${where}`).toBe(false);
    };

    // The model read the result and the error with markers in place of the token and the secret.
    const sent = JSON.stringify(fake.requests.map((request) => request.body));
    expectNoCredential("the model's requests", sent);
    const marked =
      /your token is \[redacted:oauth_token:[0-9a-f]{12}\] and your client secret is \[redacted:client_secret:/;
    expect(sent).toMatch(marked);
    expect(sent).toMatch(new RegExp(`refused: ${marked.source}`));

    const database = new pg.Client({ connectionString: sandbox.databaseUrl });
    await database.connect();
    let audit: AuditRow[];
    try {
      audit = (
        await database.query<AuditRow>(
          "select kind, node, tool, subject, detail from warrant.audit_events where kind = 'secret_redacted' and tool = 'leak'",
        )
      ).rows;
    } finally {
      await database.end();
    }
    const kinds = audit.flatMap((row) => (JSON.parse(row.detail) as Detail).redactions.map((entry) => entry.kind));
    expect(new Set(kinds)).toEqual(new Set(["oauth_token", "client_secret"]));

    expectNoCredential("the database", await everyStoredValue(sandbox.databaseUrl));
    const dump = await run("pg_dump", ["--no-owner", sandbox.databaseUrl], { maxBuffer: 256 * 1024 * 1024 });
    expectNoCredential("pg_dump", dump.stdout);
    expectNoCredential("the server's logs", server.stderr());
  }, 180_000);
});
