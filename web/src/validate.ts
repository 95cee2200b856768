/**
 * Checks edited arguments against a tool's JSON schema before they are sent,
 * with the validator the server uses (ajv, same options: no coercion, no
 * defaults). The server checks again; this only saves a round trip and says
 * which field is wrong, in words.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import type { JsonSchema } from "./types.js";

export interface FieldError {
  field: string;
  message: string;
}

const ajv = new Ajv({
  allErrors: true,
  coerceTypes: false,
  useDefaults: false,
  strict: false,
  removeAdditional: false,
  logger: false,
});
/** Compiled per schema object; `null` when the browser cannot compile it (a pattern, say): left to the server. */
const compiled = new WeakMap<JsonSchema, ValidateFunction | null>();

function validatorFor(schema: JsonSchema): ValidateFunction | null {
  if (compiled.has(schema)) return compiled.get(schema) ?? null;
  let validate: ValidateFunction | null;
  try {
    validate = ajv.compile(schema);
  } catch {
    validate = null;
  }
  compiled.set(schema, validate);
  return validate;
}

/** The argument an error is about: the first segment of its path, or the key the keyword names. */
function fieldOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required") return String(params.missingProperty);
  if (error.keyword === "additionalProperties") return String(params.additionalProperty);
  const segment = error.instancePath.split("/")[1] ?? "";
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** What a reviewer reads for one ajv error: the rule in words, never the keyword. */
function messageOf(error: ErrorObject, schema: JsonSchema): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return "is required";
    case "additionalProperties":
      return "is not an argument of this tool";
    case "type":
      return `must be ${[params.type].flat().join(" or ")}`;
    case "enum":
      return `must be one of ${(params.allowedValues as unknown[]).join(", ")}`;
    case "minLength":
      return `needs at least ${String(params.limit)} characters`;
    case "maxLength":
      return `allows at most ${String(params.limit)} characters`;
    case "pattern": {
      const description = schema.description;
      return `does not have the expected form${description ? ` (${description})` : ""}`;
    }
    case "minimum":
      return `must be at least ${String(params.limit)}`;
    case "maximum":
      return `must be at most ${String(params.limit)}`;
    case "exclusiveMinimum":
      return `must be more than ${String(params.limit)}`;
    case "exclusiveMaximum":
      return `must be less than ${String(params.limit)}`;
    default:
      return "is not valid for this tool";
  }
}

/** Errors of `args` against an object schema, one per field at most, in the schema's field order; empty when valid. */
export function validateArguments(schema: JsonSchema, args: Record<string, unknown>): FieldError[] {
  const validate = validatorFor(schema);
  if (validate === null || validate(args)) return [];
  const properties = schema.properties ?? {};
  const errors: FieldError[] = [];
  for (const error of validate.errors ?? []) {
    const field = fieldOf(error);
    const property = Object.hasOwn(properties, field) ? properties[field] : undefined;
    if (!errors.some((known) => known.field === field))
      errors.push({ field, message: messageOf(error, property ?? schema) });
  }
  // Known fields in the schema's order, then unknown ones in the order they were given.
  const order = [...Object.keys(properties), ...Object.keys(args)];
  return errors.sort((a, b) => order.indexOf(a.field) - order.indexOf(b.field));
}
