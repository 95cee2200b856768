/**
 * Checks edited arguments against a tool's JSON schema before they are sent
 * (the subset MCP tool schemas use: types, required, no extra keys, enums,
 * string lengths and patterns, number bounds). The server checks again; this
 * only saves a round trip and says which field is wrong.
 */
import type { JsonSchema } from "./types.js";

export interface FieldError {
  field: string;
  message: string;
}

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "null":
      return value === null;
    default:
      return true;
  }
}

function checkValue(field: string, schema: JsonSchema, value: unknown): FieldError[] {
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.length > 0 && !types.some((type) => typeMatches(type, value)))
    return [{ field, message: `must be ${types.join(" or ")}` }];
  const errors: FieldError[] = [];
  if (schema.enum && !schema.enum.some((option) => option === value))
    errors.push({ field, message: `must be one of ${schema.enum.join(", ")}` });
  if (typeof value === "string") {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      errors.push({ field, message: `needs at least ${schema.minLength} characters` });
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      errors.push({ field, message: `allows at most ${schema.maxLength} characters` });
    if (schema.pattern !== undefined && !safePattern(schema.pattern).test(value))
      errors.push({
        field,
        message: `does not have the expected form${schema.description ? ` (${schema.description})` : ""}`,
      });
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum)
      errors.push({ field, message: `must be at least ${schema.minimum}` });
    if (schema.maximum !== undefined && value > schema.maximum)
      errors.push({ field, message: `must be at most ${schema.maximum}` });
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum)
      errors.push({ field, message: `must be more than ${schema.exclusiveMinimum}` });
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum)
      errors.push({ field, message: `must be less than ${schema.exclusiveMaximum}` });
  }
  return errors;
}

function safePattern(pattern: string): RegExp {
  try {
    return new RegExp(pattern, "u");
  } catch {
    return /(?:)/; // A pattern this browser cannot compile is left to the server.
  }
}

/** Errors of `args` against an object schema; empty when valid. */
export function validateArguments(schema: JsonSchema, args: Record<string, unknown>): FieldError[] {
  const properties = schema.properties ?? {};
  const errors: FieldError[] = [];
  for (const name of schema.required ?? [])
    if (!Object.hasOwn(args, name)) errors.push({ field: name, message: "is required" });
  for (const [name, value] of Object.entries(args)) {
    const property = Object.hasOwn(properties, name) ? properties[name] : undefined;
    if (property === undefined) {
      if (schema.additionalProperties === false)
        errors.push({ field: name, message: "is not an argument of this tool" });
      continue;
    }
    errors.push(...checkValue(name, property, value));
  }
  return errors;
}
