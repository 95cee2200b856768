/**
 * The notes server's resource `notes://courses/{course}/outline` and prompt
 * `quiz_from_notes`, over stdio through the SDK client as a host would call
 * them: identity from `_meta`, enrolment and release enforced by the server,
 * a forbidden course answered byte for byte like a missing one.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCorpus, type Corpus } from "../../tools/notes/corpus.js";
import { OutlineSchema, type Outline } from "../../tools/notes/outline.js";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const SERVER_ARGS = ["--import", "tsx", path.join("tools", "notes", "server.ts")];
const SPAWN_TIMEOUT_MS = 30_000;

/** `_meta` as the host sends it. */
function meta(userId: string, tenant = "uni"): Record<string, string> {
  return { "warrant/user_id": userId, "warrant/tenant": tenant };
}

const outlineUri = (course: string) => `notes://courses/${course}/outline`;

/** A thrown MCP error as the exact bytes a caller sees (code, message, data). */
async function refusal(promise: Promise<unknown>): Promise<{ error: McpError; bytes: string }> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(McpError);
    const mcp = error as McpError;
    return { error: mcp, bytes: JSON.stringify({ code: mcp.code, message: mcp.message, data: mcp.data }) };
  }
  throw new Error("expected the request to be refused");
}

let client: Client;
let corpus: Corpus;

beforeAll(async () => {
  corpus = await loadCorpus(path.join(REPO_ROOT, "tools", "notes", "data", "notes.json"));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: SERVER_ARGS,
    cwd: REPO_ROOT,
    env: getDefaultEnvironment(),
    stderr: "pipe",
  });
  transport.stderr?.on("data", () => undefined);
  client = new Client({ name: "notes-resources-test", version: "0.0.0" });
  await client.connect(transport);
}, SPAWN_TIMEOUT_MS);

afterAll(async () => {
  await client?.close();
});

async function outline(
  userId: string,
  course: string,
  tenant = "uni",
): Promise<{ outline: Outline; mimeType: string | undefined }> {
  const result = await client.readResource({ uri: outlineUri(course), _meta: meta(userId, tenant) });
  expect(result.contents).toHaveLength(1);
  const content = result.contents[0];
  if (content === undefined || !("text" in content) || typeof content.text !== "string")
    throw new Error("expected one text content");
  expect(content.uri).toBe(outlineUri(course));
  return { outline: OutlineSchema.strict().parse(JSON.parse(content.text)), mimeType: content.mimeType };
}

const released = (course: string) => corpus.notes.filter((note) => note.course === course && note.released);
const unreleased = () => corpus.notes.filter((note) => !note.released);

describe("notes server: discovery", () => {
  it("advertises the outline template and the quiz prompt", async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => [template.name, template.uriTemplate, template.mimeType])).toEqual([
      ["course_outline", "notes://courses/{course}/outline", "application/json"],
    ]);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(["quiz_from_notes"]);
    expect(prompts[0]?.arguments?.map((argument) => [argument.name, argument.required])).toEqual([
      ["course_id", true],
      ["questions", false],
    ]);
    // Which courses exist depends on the caller: nothing is listed.
    expect((await client.listResources()).resources).toEqual([]);
  });
});

describe("notes server: course outline resource", () => {
  it("gives alice the cs301 title and every released note, in syllabus order, as JSON", async () => {
    const { outline: cs301, mimeType } = await outline("alice", "cs301");
    expect(mimeType).toBe("application/json");
    expect(cs301.course).toBe("cs301");
    expect(cs301.title).toBe(corpus.courses?.find((course) => course.course === "cs301")?.title);
    expect(cs301.version).toBe(corpus.version);
    expect(cs301.notes.map((note) => [note.note_id, note.title])).toEqual(
      released("cs301").map((note) => [note.note_id, note.title]),
    );
    expect(cs301.notes.every((note) => note.released)).toBe(true);
  });

  it("lists unreleased notes only to a principal with notes:read_unreleased (sam)", async () => {
    const { outline: staff } = await outline("sam", "cs301");
    expect(staff.notes.map((note) => note.note_id)).toEqual(
      corpus.notes.filter((note) => note.course === "cs301").map((note) => note.note_id),
    );
    expect(staff.notes.find((note) => note.note_id === "cs301.exam-2-solutions")).toMatchObject({ released: false });
  });

  it("never lists an unreleased note to a student, in any course they are enrolled in", async () => {
    const hidden = new Set(unreleased().map((note) => note.note_id));
    expect(hidden.size).toBeGreaterThan(0);
    for (const [student, course] of [
      ["alice", "cs301"],
      ["bob", "db201"],
    ] as const) {
      const { outline: seen } = await outline(student, course);
      expect(seen.notes.length).toBeGreaterThan(0);
      expect(seen.notes.filter((note) => hidden.has(note.note_id) || !note.released)).toEqual([]);
    }
  });

  it("answers a course bob is not enrolled in exactly like a missing or malformed one", async () => {
    const forbidden = await refusal(client.readResource({ uri: outlineUri("cs301"), _meta: meta("bob") }));
    expect(forbidden.error.code).toBe(ErrorCode.InvalidParams);
    expect(forbidden.error.data).toEqual({ code: "access_denied", message: "course not available to this caller" });
    expect(forbidden.bytes).not.toContain("cs301");
    for (const other of [
      client.readResource({ uri: outlineUri("zz999"), _meta: meta("bob") }),
      client.readResource({ uri: outlineUri("CS301"), _meta: meta("bob") }),
      // An unknown user, and a known user presented under another tenant, are nobody.
      client.readResource({ uri: outlineUri("cs301"), _meta: meta("mallory") }),
      client.readResource({ uri: outlineUri("cs301"), _meta: meta("alice", "acme") }),
    ]) {
      expect((await refusal(other)).bytes).toBe(forbidden.bytes);
    }
  });

  it("refuses a read without a _meta identity, or with half of one", async () => {
    for (const request of [
      client.readResource({ uri: outlineUri("cs301") }),
      client.readResource({ uri: outlineUri("cs301"), _meta: { "warrant/user_id": "alice" } }),
      client.readResource({ uri: outlineUri("cs301"), _meta: { "warrant/user_id": "", "warrant/tenant": "uni" } }),
    ]) {
      const refused = await refusal(request);
      expect(refused.error.code).toBe(ErrorCode.InvalidRequest);
      expect(refused.bytes).not.toContain("Gradient");
    }
  });
});

describe("notes server: quiz_from_notes prompt", () => {
  async function prompt(userId: string, args: Record<string, string>) {
    return client.getPrompt({ name: "quiz_from_notes", arguments: args, _meta: meta(userId) });
  }

  it("tells the model to write N questions grounded only in alice's cs301 notes, citing note ids", async () => {
    const result = await prompt("alice", { course_id: "cs301", questions: "3" });
    expect(result.messages).toHaveLength(1);
    const message = result.messages[0];
    expect(message?.role).toBe("user");
    if (message?.content.type !== "text") throw new Error("expected a text message");
    const text = message.content.text;
    expect(text).toMatch(/^Write 3 quiz question/);
    expect(text).toMatch(/grounded only in the course notes/);
    expect(text).toMatch(/cite the id of the note/);
    for (const note of released("cs301")) expect(text).toContain(note.note_id);
    for (const note of unreleased()) expect(text).not.toContain(note.note_id);
    // Ids and titles only: note text is read through read_note, not handed over here.
    expect(text).not.toContain(released("cs301")[0]?.text.slice(0, 60));
  });

  it("asks for 5 questions by default", async () => {
    const result = await prompt("alice", { course_id: "cs301" });
    const content = result.messages[0]?.content;
    expect(content?.type === "text" ? content.text : "").toMatch(/^Write 5 quiz question/);
  });

  it("answers bob's cs301 exactly like a missing course, and refuses a missing identity", async () => {
    const forbidden = await refusal(prompt("bob", { course_id: "cs301" }));
    expect(forbidden.error.data).toMatchObject({ code: "access_denied" });
    expect((await refusal(prompt("bob", { course_id: "zz999" }))).bytes).toBe(forbidden.bytes);
    expect((await refusal(prompt("bob", { course_id: "../../etc" }))).bytes).toBe(forbidden.bytes);
    // The resource and the prompt refuse with the same bytes too.
    expect((await refusal(client.readResource({ uri: outlineUri("cs301"), _meta: meta("bob") }))).bytes).toBe(
      forbidden.bytes,
    );

    const anonymous = await refusal(client.getPrompt({ name: "quiz_from_notes", arguments: { course_id: "cs301" } }));
    expect(anonymous.error.code).toBe(ErrorCode.InvalidRequest);
  });

  it.each([["0"], ["21"], ["x"], ["-1"]])("rejects questions=%s as invalid arguments", async (questions) => {
    const refused = await refusal(prompt("alice", { course_id: "cs301", questions }));
    expect(refused.error.code).toBe(ErrorCode.InvalidParams);
    expect(refused.error.data).toBeUndefined();
  });
});
