/**
 * Strict argument validation. The raw argument text is parsed here (never the
 * planner's pre-parsed object), then checked against the model-visible schema
 * with no coercion, no defaults and no unknown keys.
 */
import { Ajv, type ValidateFunction } from "ajv";
import type { CatalogTool } from "./contracts.js";
import { parseToolArguments } from "./arguments.js";

export type Validation =
  | { ok: true; args: Record<string, unknown> }
  | { ok: false; code: "invalid_arguments"; message: string };

const ajv = new Ajv({
  allErrors: false,
  coerceTypes: false,
  useDefaults: false,
  strict: false,
  removeAdditional: false,
});
const compiled = new WeakMap<CatalogTool, ValidateFunction>();

function validatorFor(tool: CatalogTool): ValidateFunction {
  let validate = compiled.get(tool);
  if (!validate) {
    validate = ajv.compile(tool.model_schema);
    compiled.set(tool, validate);
  }
  return validate;
}

/** The longest string anywhere in the value, for the contract's string bound. */
function longestString(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (Array.isArray(value)) return value.reduce((max: number, item) => Math.max(max, longestString(item)), 0);
  if (typeof value === "object" && value !== null) return longestString(Object.values(value));
  return 0;
}

/** Parses and validates a proposal's raw arguments for one tool. */
export function validateArguments(tool: CatalogTool, rawArguments: string): Validation {
  const parsed = parseToolArguments(rawArguments);
  if (!parsed.ok) return { ok: false, code: "invalid_arguments", message: parsed.message };
  const validate = validatorFor(tool);
  if (!validate(parsed.value)) {
    const error = validate.errors?.[0];
    const where = error?.instancePath ? `"${error.instancePath.slice(1)}"` : "arguments";
    const detail =
      error?.keyword === "additionalProperties"
        ? `unknown argument "${String(error.params["additionalProperty"])}"`
        : `${where} ${error?.message ?? "is invalid"}`;
    return { ok: false, code: "invalid_arguments", message: detail };
  }
  if (longestString(parsed.value) > tool.contract.max_string_chars) {
    return {
      ok: false,
      code: "invalid_arguments",
      message: `a string is longer than ${tool.contract.max_string_chars} characters`,
    };
  }
  return { ok: true, args: parsed.value };
}
