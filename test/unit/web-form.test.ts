/** The approval edit form's pure parts (web/src): drafts from a tool schema, typed arguments back, validation before sending. */
import { describe, expect, it } from "vitest";
import { argsOf, draftOf, kindOf, schemaFor } from "../../web/src/draft.js";
import type { JsonSchema } from "../../web/src/types.js";
import { validateArguments } from "../../web/src/validate.js";

const EVENT: JsonSchema = {
  type: "object",
  additionalProperties: false,
  required: ["title", "start", "minutes"],
  properties: {
    title: { type: "string", minLength: 1, maxLength: 10 },
    start: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}T" },
    minutes: { type: "integer", minimum: 1, maximum: 60 },
    calendar: { type: "string", enum: ["study", "work"] },
    private: { type: "boolean" },
    tags: { type: "array", items: { type: "string" } },
  },
};

describe("edit form drafts", () => {
  it("picks a field kind per schema", () => {
    expect(["title", "minutes", "calendar", "private", "tags"].map((name) => kindOf(EVENT.properties![name]!))).toEqual(
      ["text", "number", "choice", "boolean", "json"],
    );
  });

  it("round-trips arguments through a draft", () => {
    const args = {
      title: "Study",
      start: "2026-12-02T18:00:00Z",
      minutes: 40,
      calendar: "study",
      private: true,
      tags: ["a"],
    };
    const draft = draftOf(EVENT, args);
    expect(draft).toEqual({
      title: "Study",
      start: "2026-12-02T18:00:00Z",
      minutes: "40",
      calendar: "study",
      private: true,
      tags: '[\n  "a"\n]',
    });
    expect(argsOf(EVENT, draft)).toEqual({ args, errors: [] });
  });

  it("leaves out empty optional fields and reports unparseable ones", () => {
    const { args, errors } = argsOf(EVENT, {
      title: "x",
      start: "2026-12-02T18:00:00Z",
      minutes: "forty",
      calendar: "",
      private: false,
      tags: "[",
    });
    expect(args).toEqual({ title: "x", start: "2026-12-02T18:00:00Z", private: false });
    expect(errors).toEqual([
      { field: "minutes", message: "must be a number" },
      { field: "tags", message: "must be JSON" },
    ]);
  });

  it("guesses a schema from the arguments when the page has none", () => {
    expect(schemaFor(undefined, { a: "x", b: 2 })).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "number" } },
    });
    expect(schemaFor(EVENT, {})).toBe(EVENT);
  });
});

describe("validateArguments", () => {
  it("accepts valid arguments", () => {
    expect(validateArguments(EVENT, { title: "Study", start: "2026-12-02T18:00:00Z", minutes: 60 })).toEqual([]);
  });

  it("names each wrong field", () => {
    const errors = validateArguments(EVENT, {
      title: "",
      start: "tomorrow",
      minutes: 61.5,
      calendar: "home",
      extra: 1,
    });
    expect(errors.map((error) => error.field)).toEqual(["title", "start", "minutes", "calendar", "extra"]);
    expect(errors.find((error) => error.field === "minutes")?.message).toBe("must be integer");
  });

  it("requires the required fields, and bounds numbers", () => {
    expect(validateArguments(EVENT, { minutes: 0 })).toEqual([
      { field: "title", message: "is required" },
      { field: "start", message: "is required" },
      { field: "minutes", message: "must be at least 1" },
    ]);
  });

  it("does not treat prototype names as known arguments", () => {
    expect(
      validateArguments(EVENT, { title: "a", start: "2026-12-02T1", minutes: 1, constructor: "x" }).map(
        (error) => error.field,
      ),
    ).toEqual(["constructor"]);
  });
});
