/**
 * Relevance when the eligible set is large: only servers whose tools match
 * the request are candidates (stop words dropped, plurals folded), so a
 * notes question is offered the notes tools, not the top-k by catalog order.
 */
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/auth/principal.js";
import { buildCatalog } from "../../src/mcp/catalog.js";
import type { CatalogTool } from "../../src/policy/contracts.js";
import { ToolContractSchema } from "../../src/policy/contracts.js";
import { effectiveTools } from "../../src/policy/effective-tools.js";
import { RISKS } from "../../src/policy/contracts.js";

const alice: Principal = {
  user_id: "alice",
  tenant: "uni",
  role: "student",
  scopes: [],
  grants: { courses: ["cs301"] },
};

function tool(name: string, server: string, description: string, contract: Record<string, unknown> = {}): CatalogTool {
  const parsed = ToolContractSchema.parse({ server, risk: "read", description, ...contract });
  const built = buildCatalog({ [name]: parsed }, { [server]: [{ name, inputSchema: { type: "object" } }] }).tools[0];
  if (!built) throw new Error(`${name} not in catalog`);
  return built;
}

// Shaped like the shipped servers plus the third-party examples.
const schedule = tool(
  "calculate_schedule",
  "schedule",
  "Split a number of study minutes over days under a daily limit.",
  { always_available: true },
);
const search = tool(
  "search_notes",
  "notes",
  "Search the course notes the user is enrolled in. Returns ranked passages with note ids.",
);
const read = tool("read_note", "notes", "Read one note by its note_id (from search results).");
const listEvents = tool(
  "list_events",
  "calendar",
  "Lists the caller's events, sorted by start. Optional: a window (from/to, ISO 8601 with offset).",
);
const status = tool("get_write_status", "calendar", "Whether a calendar write with this idempotency key was applied.");
const createEvent = tool("create_study_event", "calendar", "Creates one study event in the caller's calendar.");
const listDirectory = tool(
  "list_directory",
  "files",
  "Get a detailed listing of all files and directories, with [FILE] and [DIR] prefixes.",
);
const readFile = tool("read_text_file", "files", "Read a text file from the shared folder.");
const echo = tool("echo", "everything", "Echoes back the input string");
const catalog = [search, read, schedule, listEvents, status, createEvent, listDirectory, readFile, echo];

const offer = (request: string, maxTools = 8) =>
  effectiveTools({
    tools: catalog,
    principal: alice,
    stage: "default",
    allowedRisks: RISKS,
    isHealthy: () => true,
    maxTools,
    request,
  });
const names = (tools: readonly CatalogTool[]) => tools.map((entry) => entry.name);

describe("effectiveTools: relevance over servers", () => {
  it("offers a notes question the notes tools and the always-available one, and withholds the rest as not_relevant", () => {
    const result = offer("Compare self-attention with cross-attention using my notes");
    expect(names(result.offered)).toEqual(["search_notes", "read_note", "calculate_schedule"]);
    expect(result.withheld.map((entry) => entry.tool).sort()).toEqual([
      "create_study_event",
      "echo",
      "get_write_status",
      "list_directory",
      "list_events",
      "read_text_file",
    ]);
    expect(result.withheld.every((entry) => entry.reason === "not_relevant")).toBe(true);
  });

  it("does not count stop words: 'with' and 'using' match no tool", () => {
    expect(names(offer("with using with").offered)).toHaveLength(8);
  });

  it("folds plurals both ways: 'note' in the request matches 'notes' in a description", () => {
    expect(names(offer("the note on dropout").offered)).toEqual(["search_notes", "read_note", "calculate_schedule"]);
  });

  it("widens a match to the tool's whole server: a calendar request gets every calendar tool", () => {
    expect(names(offer("put two study sessions in my calendar").offered)).toEqual([
      "calculate_schedule",
      "list_events",
      "get_write_status",
      "create_study_event",
    ]);
  });

  it("offers tools of several servers when the request names several", () => {
    expect(names(offer("find my notes on attention and add study sessions to my calendar").offered)).toEqual([
      "search_notes",
      "read_note",
      "calculate_schedule",
      "list_events",
      "get_write_status",
      "create_study_event",
    ]);
  });

  it("still caps candidates at maxTools, the best-matching first", () => {
    const result = offer("find my notes on attention and add study sessions to my calendar", 3);
    // create_study_event matches two words (study, calendar), search_notes one (note; it ties read_note and comes first in the catalog).
    expect(names(result.offered)).toEqual(["search_notes", "calculate_schedule", "create_study_event"]);
  });

  it("falls back to the top-k by catalog order when nothing matches", () => {
    expect(names(offer("zzz qqq").offered)).toEqual([
      "search_notes",
      "read_note",
      "calculate_schedule",
      "list_events",
      "get_write_status",
      "create_study_event",
      "list_directory",
      "read_text_file",
    ]);
  });

  it("offers every eligible tool, matching or not, when the set is within maxTools", () => {
    expect(offer("Compare self-attention with cross-attention using my notes", 9).offered).toEqual(catalog);
  });
});
