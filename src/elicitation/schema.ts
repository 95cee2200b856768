/**
 * The form an MCP server asks the user to fill in (`elicitation/create`,
 * form mode): a flat object of primitive fields (string, number, integer,
 * boolean, single- and multi-select enums), as the pinned SDK's
 * `ElicitRequestFormParamsSchema` restricts it. Two pure jobs:
 * - `defaultsOf` / `withDefaults`: the defaults a server declared (SEP-1034),
 *   shown prefilled in the form and filled in for every field the answer
 *   leaves out, so the server gets them whoever answered;
 * - `validateAnswer`: the answer checked strictly against the form (types,
 *   enums, formats, bounds, required fields, no unknown field, no control
 *   characters, bounded sizes) before it reaches the server.
 */

/** One field of a requested form, as the SDK has already shape-checked it. */
export interface FieldSchema {
  type: "string" | "number" | "integer" | "boolean" | "array";
  title?: string;
  description?: string;
  minLength?: number;
  maxLength?: number;
  format?: "email" | "uri" | "date" | "date-time";
  minimum?: number;
  maximum?: number;
  enum?: string[];
  oneOf?: { const: string; title: string }[];
  minItems?: number;
  maxItems?: number;
  items?: { type?: "string"; enum?: string[]; anyOf?: { const: string; title: string }[] };
  default?: string | number | boolean | string[];
}

/** A requested form: `requestedSchema` of `elicitation/create`. */
export interface RequestedSchema {
  type: "object";
  properties: Record<string, FieldSchema>;
  required?: string[];
}

export type AnswerValue = string | number | boolean | string[];
export type AnswerContent = Record<string, AnswerValue>;

/** Why one field of an answer was refused (never the value itself). */
export interface FieldProblem {
  field: string;
  problem:
    | "unknown_field"
    | "missing"
    | "wrong_type"
    | "not_allowed"
    | "bad_format"
    | "too_short"
    | "too_long"
    | "too_small"
    | "too_large"
    | "control_characters";
}

export type AnswerCheck = { ok: true; content: AnswerContent } | { ok: false; problems: FieldProblem[] };

/** Fields a form may have; a larger one is refused before anyone sees it. */
export const MAX_FIELDS = 32;
/** Characters of one string answer when the form sets no lower `maxLength`. */
export const MAX_STRING_CHARS = 4_000;
/** Characters of a requested form as JSON. */
const MAX_SCHEMA_CHARS = 32_000;
/** Choices of one multi-select answer. */
const MAX_CHOICES = 64;

// C0 controls and DEL; a form's free text may keep tabs and line breaks.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{1,63}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A real calendar date (`2026-02-30` is not one). */
function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function formatHolds(format: FieldSchema["format"], text: string): boolean {
  switch (format) {
    case undefined:
      return true;
    case "date":
      return isDate(text);
    case "date-time":
      return DATE_TIME.test(text) && isDate(text.slice(0, 10)) && !Number.isNaN(Date.parse(text));
    case "email":
      return EMAIL.test(text);
    case "uri":
      return URL.canParse(text) && /^[a-z][a-z0-9+.-]*:/i.test(text);
  }
}

/** The allowed values of a single-select field (undefined: free text). */
function choicesOf(field: FieldSchema): string[] | undefined {
  if (field.enum) return field.enum;
  if (field.oneOf) return field.oneOf.map((option) => option.const);
  return undefined;
}

/** The allowed values of a multi-select field's items. */
function itemChoicesOf(field: FieldSchema): string[] {
  return field.items?.enum ?? field.items?.anyOf?.map((option) => option.const) ?? [];
}

/** Sets an own property, whatever its name (a field may be called `__proto__`). */
function put(target: AnswerContent, name: string, value: AnswerValue): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

/** The defaults a form declares, by field (SEP-1034). */
export function defaultsOf(schema: RequestedSchema): AnswerContent {
  const values: AnswerContent = {};
  for (const [name, field] of Object.entries(schema.properties)) {
    if (field.default !== undefined)
      put(values, name, Array.isArray(field.default) ? [...field.default] : field.default);
  }
  return values;
}

/** `content` with each field it leaves out set to the form's default for it (SEP-1034). */
export function withDefaults(schema: RequestedSchema, content: AnswerContent): AnswerContent {
  const filled = defaultsOf(schema);
  for (const [name, value] of Object.entries(content)) put(filled, name, value);
  return filled;
}

function checkString(name: string, field: FieldSchema, value: unknown): FieldProblem | undefined {
  if (typeof value !== "string") return { field: name, problem: "wrong_type" };
  if (CONTROL.test(value)) return { field: name, problem: "control_characters" };
  const choices = choicesOf(field);
  if (choices) return choices.includes(value) ? undefined : { field: name, problem: "not_allowed" };
  const length = [...value].length;
  if (length > Math.min(field.maxLength ?? MAX_STRING_CHARS, MAX_STRING_CHARS))
    return { field: name, problem: "too_long" };
  if (field.minLength !== undefined && length < field.minLength) return { field: name, problem: "too_short" };
  if (!formatHolds(field.format, value)) return { field: name, problem: "bad_format" };
  return undefined;
}

function checkNumber(name: string, field: FieldSchema, value: unknown): FieldProblem | undefined {
  if (typeof value !== "number" || !Number.isFinite(value)) return { field: name, problem: "wrong_type" };
  if (field.type === "integer" && !Number.isInteger(value)) return { field: name, problem: "wrong_type" };
  if (field.minimum !== undefined && value < field.minimum) return { field: name, problem: "too_small" };
  if (field.maximum !== undefined && value > field.maximum) return { field: name, problem: "too_large" };
  return undefined;
}

function checkChoices(name: string, field: FieldSchema, value: unknown): FieldProblem | undefined {
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string"))
    return { field: name, problem: "wrong_type" };
  const allowed = itemChoicesOf(field);
  if (value.some((item) => !allowed.includes(item as string)) || new Set(value).size !== value.length)
    return { field: name, problem: "not_allowed" };
  if (value.length > Math.min(field.maxItems ?? MAX_CHOICES, MAX_CHOICES)) return { field: name, problem: "too_long" };
  if (field.minItems !== undefined && value.length < field.minItems) return { field: name, problem: "too_short" };
  return undefined;
}

function checkField(name: string, field: FieldSchema, value: unknown): FieldProblem | undefined {
  switch (field.type) {
    case "string":
      return checkString(name, field, value);
    case "number":
    case "integer":
      return checkNumber(name, field, value);
    case "boolean":
      return typeof value === "boolean" ? undefined : { field: name, problem: "wrong_type" };
    case "array":
      return checkChoices(name, field, value);
  }
}

/**
 * Checks an accepted answer against the form, after filling in its defaults.
 * Problems name the field (own properties of the form only: a field named
 * `__proto__` or `constructor` is unknown unless the form declares it).
 */
export function validateAnswer(schema: RequestedSchema, answer: unknown): AnswerCheck {
  if (!isRecord(answer)) return { ok: false, problems: [{ field: "", problem: "wrong_type" }] };
  const problems: FieldProblem[] = [];
  const given = Object.keys(answer);
  if (given.length > MAX_FIELDS) return { ok: false, problems: [{ field: "", problem: "too_long" }] };
  const content: AnswerContent = {};
  for (const name of given) {
    if (!Object.hasOwn(schema.properties, name)) {
      problems.push({ field: name.slice(0, 64), problem: "unknown_field" });
      continue;
    }
    const field = schema.properties[name] as FieldSchema;
    const problem = checkField(name, field, answer[name]);
    if (problem) problems.push(problem);
    else put(content, name, answer[name] as AnswerValue);
  }
  const filled = withDefaults(schema, content);
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(filled, name) && !problems.some((problem) => problem.field === name))
      problems.push({ field: name, problem: "missing" });
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, content: filled };
}

/** Text as shown to a person: control characters (but tabs and line breaks) removed, at most `max` characters. */
export function displayText(text: string, max: number): string {
  return text.replace(new RegExp(CONTROL.source, "g"), "").slice(0, max);
}

/** A form the host will show: at most `MAX_FIELDS` fields, names without control characters, defaults that fit. */
export function checkRequestedSchema(schema: RequestedSchema): { ok: true } | { ok: false; reason: string } {
  const text = JSON.stringify(schema);
  // Postgres refuses \u0000 in jsonb; a form this large is not one a person fills in.
  if (text.length > MAX_SCHEMA_CHARS || text.includes("\\u0000"))
    return { ok: false, reason: "the form is too large or has NUL characters" };
  const names = Object.keys(schema.properties);
  if (names.length > MAX_FIELDS) return { ok: false, reason: `more than ${MAX_FIELDS} fields` };
  for (const name of names) {
    if (name.length === 0 || name.length > 64 || CONTROL.test(name))
      return { ok: false, reason: "a field name is empty, too long or has control characters" };
    const field = schema.properties[name] as FieldSchema;
    if (field.default !== undefined && checkField(name, field, field.default))
      return { ok: false, reason: `the default of ${name} does not fit its own field` };
  }
  for (const name of schema.required ?? [])
    if (!Object.hasOwn(schema.properties, name)) return { ok: false, reason: `required field ${name} is not defined` };
  return { ok: true };
}
