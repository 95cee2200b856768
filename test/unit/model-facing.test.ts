/**
 * What the model is shown of a tool: descriptions cut to their first
 * sentences, annotations dropped, every validation keyword kept.
 */
import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../../src/policy/contracts.js";
import {
  MAX_ARGUMENT_DESCRIPTION,
  MAX_TOOL_DESCRIPTION,
  modelFacingTool,
  trimDescription,
} from "../../src/policy/model-facing.js";

const DATE_TIME = "^(\\d{4})-(\\d{2})-(\\d{2})T(\\d{2}):(\\d{2})(?::(\\d{2}))?(?:Z|([+-])(\\d{2}):(\\d{2}))$";

describe("trimDescription", () => {
  it("keeps a short text, with whitespace runs folded", () => {
    expect(trimDescription("Read one  note\n by id.", 160)).toBe("Read one note by id.");
  });

  it("keeps the leading whole sentences that fit", () => {
    const text =
      "Creates one study event in the caller's calendar. " +
      "The idempotency_key makes retries safe: repeating a call replays it. After a timeout, check get_write_status.";
    expect(trimDescription(text, 100)).toBe("Creates one study event in the caller's calendar.");
    expect(trimDescription(text, 130)).toBe(
      "Creates one study event in the caller's calendar. The idempotency_key makes retries safe: repeating a call replays it.",
    );
  });

  it("does not end a sentence at e.g. or inside a number", () => {
    const text = "Start, ISO 8601 with offset, e.g. 2025-03-01T18:00:00+01:00. Nothing else.";
    expect(trimDescription(text, 70, 1)).toBe("Start, ISO 8601 with offset, e.g. 2025-03-01T18:00:00+01:00.");
    expect(trimDescription("Version 1.5 of the rules. Then more.", 200, 1)).toBe("Version 1.5 of the rules.");
  });

  it("cuts a first sentence longer than the limit at a word, marked with an ellipsis", () => {
    const trimmed = trimDescription(`${"word ".repeat(60)}end.`, 50);
    expect(trimmed.length).toBeLessThanOrEqual(50);
    expect(trimmed.endsWith("word…")).toBe(true);
  });
});

describe("modelFacingTool", () => {
  it("returns a definition that is already lean unchanged", () => {
    const lean: ToolSpec = {
      name: "search_notes",
      description: "Search lecture notes.",
      parameters: {
        type: "object",
        properties: { query: { type: "string" }, limit: { type: "integer" } },
        required: ["query"],
        additionalProperties: false,
      },
    };
    expect(modelFacingTool(lean)).toEqual(lean);
  });

  it("keeps every validation keyword while dropping annotations and trimming descriptions", () => {
    const served: ToolSpec = {
      name: "create_study_event",
      description:
        "Creates one study event (at most 24 h, end after start) in the caller's calendar. " +
        "The host handles the idempotency key and retries for you. ".repeat(4),
      parameters: {
        $schema: "http://json-schema.org/draft-07/schema#",
        title: "CreateStudyEvent",
        type: "object",
        properties: {
          // Properties named like annotations are arguments, not annotations.
          title: {
            type: "string",
            minLength: 1,
            maxLength: 200,
            pattern: "\\S",
            description: "Event title, 1–200 characters. Shown in the calendar app.",
          },
          description: { type: "string", maxLength: 2000, description: "Event contents." },
          start: { type: "string", maxLength: 40, pattern: DATE_TIME, examples: ["2025-03-01T18:00:00+01:00"] },
          kind: { enum: ["lecture", "review"], default: "review", title: "Kind" },
          sessions: {
            type: "array",
            items: { type: "integer", minimum: 1, maximum: 240, $comment: "minutes" },
            minItems: 1,
          },
        },
        required: ["title", "start"],
        additionalProperties: false,
      },
    };
    const shown = modelFacingTool(served);
    expect(shown.name).toBe("create_study_event");
    // The first two sentences fit in MAX_TOOL_DESCRIPTION; the repeats after them do not.
    expect(shown.description).toBe(
      "Creates one study event (at most 24 h, end after start) in the caller's calendar. " +
        "The host handles the idempotency key and retries for you.",
    );
    expect(shown.parameters).toEqual({
      type: "object",
      properties: {
        title: {
          type: "string",
          minLength: 1,
          maxLength: 200,
          pattern: "\\S",
          description: "Event title, 1–200 characters.",
        },
        description: { type: "string", maxLength: 2000, description: "Event contents." },
        start: { type: "string", maxLength: 40, pattern: DATE_TIME },
        kind: { enum: ["lecture", "review"], default: "review" },
        sessions: { type: "array", items: { type: "integer", minimum: 1, maximum: 240 }, minItems: 1 },
      },
      required: ["title", "start"],
      additionalProperties: false,
    });
  });

  it("keeps literal values whole even when they look like schemas", () => {
    const served: ToolSpec = {
      name: "configure",
      description: "Configure.",
      parameters: {
        type: "object",
        properties: {
          options: { type: "object", default: { title: "kept", $schema: "kept" }, const: { title: "kept" } },
        },
      },
    };
    expect(modelFacingTool(served).parameters).toEqual(served.parameters);
  });

  it("bounds descriptions by the module's limits", () => {
    const long = "A sentence that is long enough to matter here. ".repeat(10);
    const shown = modelFacingTool({
      name: "t",
      description: long,
      parameters: { type: "object", properties: { a: { type: "string", description: long } } },
    });
    expect(shown.description.length).toBeLessThanOrEqual(MAX_TOOL_DESCRIPTION);
    const argument = (shown.parameters["properties"] as Record<string, { description: string }>)["a"];
    expect(argument?.description).toBe("A sentence that is long enough to matter here.");
    expect(argument?.description.length).toBeLessThanOrEqual(MAX_ARGUMENT_DESCRIPTION);
  });

  it("does not change the definition it was given", () => {
    const parameters = { $schema: "x", type: "object", properties: {} };
    modelFacingTool({ name: "t", description: "T.", parameters });
    expect(parameters).toEqual({ $schema: "x", type: "object", properties: {} });
  });
});
