/**
 * An edit form's values: text per field (what inputs hold), turned back into
 * typed arguments by the tool's JSON schema.
 */
import type { JsonSchema } from "./types.js";
import type { FieldError } from "./validate.js";

export type Draft = Record<string, string | boolean>;

export type FieldKind = "text" | "number" | "boolean" | "choice" | "json";

export function kindOf(schema: JsonSchema): FieldKind {
  if (schema.enum) return "choice";
  const type = Array.isArray(schema.type) ? schema.type.find((item) => item !== "null") : schema.type;
  if (type === "string") return "text";
  if (type === "integer" || type === "number") return "number";
  if (type === "boolean") return "boolean";
  return "json";
}

/** The schema to edit by: the tool's, or one guessed from the arguments when the page has none. */
export function schemaFor(schema: JsonSchema | undefined, args: Record<string, unknown>): JsonSchema {
  if (schema?.properties) return schema;
  const guess = (value: unknown): JsonSchema => ({
    type:
      typeof value === "string"
        ? "string"
        : typeof value === "number"
          ? "number"
          : typeof value === "boolean"
            ? "boolean"
            : "object",
  });
  return {
    type: "object",
    properties: Object.fromEntries(Object.entries(args).map(([name, value]) => [name, guess(value)])),
  };
}

export function draftOf(schema: JsonSchema, args: Record<string, unknown>): Draft {
  const draft: Draft = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const value = args[name];
    const kind = kindOf(property);
    if (kind === "boolean") draft[name] = value === true;
    else if (value === undefined) draft[name] = "";
    else if (kind === "json") draft[name] = JSON.stringify(value, null, 2);
    else draft[name] = String(value);
  }
  return draft;
}

/** Typed arguments from a draft; an empty optional field is left out. */
export function argsOf(schema: JsonSchema, draft: Draft): { args: Record<string, unknown>; errors: FieldError[] } {
  const args: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  const required = new Set(schema.required ?? []);
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const value = draft[name];
    const kind = kindOf(property);
    if (typeof value === "boolean") {
      args[name] = value;
      continue;
    }
    if (value === undefined || (value.trim() === "" && !required.has(name))) continue;
    if (kind === "number") {
      const number = Number(value);
      if (value.trim() === "" || Number.isNaN(number)) errors.push({ field: name, message: "must be a number" });
      else args[name] = number;
    } else if (kind === "json") {
      try {
        args[name] = JSON.parse(value);
      } catch {
        errors.push({ field: name, message: "must be JSON" });
      }
    } else if (kind === "choice") {
      const option = property.enum?.find((item) => String(item) === value);
      args[name] = option ?? value;
    } else {
      args[name] = value;
    }
  }
  return { args, errors };
}
