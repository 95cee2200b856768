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
 *   characters, bounded sizes) before it reaches the server. The form is
 *   turned into a JSON Schema with the host's bounds added and checked by
 *   ajv, the host's one JSON-Schema validator; ajv's errors become the
 *   field problems below (one per field, the first in the order listed).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";

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

/** A real calendar date (`2026-02-30` is not one). */
function isDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
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

type Problem = FieldProblem["problem"];

// Ajv's keywords as field problems, in the order a field's problems are reported (one per field: the first).
const PROBLEM_OF: Readonly<Record<string, Problem>> = {
  type: "wrong_type",
  pattern: "control_characters",
  enum: "not_allowed",
  not: "not_allowed",
  uniqueItems: "not_allowed",
  maxLength: "too_long",
  maxItems: "too_long",
  minLength: "too_short",
  minItems: "too_short",
  format: "bad_format",
  minimum: "too_small",
  maximum: "too_large",
};
const RANK: readonly Problem[] = [
  "wrong_type",
  "control_characters",
  "not_allowed",
  "too_long",
  "too_short",
  "bad_format",
  "too_small",
  "too_large",
];

// The formats a form may ask for, as this host has always read them (the date a real calendar date).
const ajv = new Ajv({
  allErrors: true,
  strict: false,
  // `strict: false` would also let NaN and Infinity pass as numbers.
  strictNumbers: true,
  ownProperties: true,
  coerceTypes: false,
  useDefaults: false,
});
ajv.addFormat("date", { type: "string", validate: isDate });
ajv.addFormat("date-time", {
  type: "string",
  validate: (text) => DATE_TIME.test(text) && isDate(text.slice(0, 10)) && !Number.isNaN(Date.parse(text)),
});
ajv.addFormat("email", { type: "string", validate: (text) => EMAIL.test(text) });
ajv.addFormat("uri", { type: "string", validate: (text) => URL.canParse(text) && /^[a-z][a-z0-9+.-]*:/i.test(text) });
// A format the SDK's shape check let through but this host does not know: no answer has it.
ajv.addFormat("warrant-unknown", { type: "string", validate: () => false });
const KNOWN_FORMATS: readonly string[] = ["date", "date-time", "email", "uri"];
const NO_CONTROL = `^[^${CONTROL.source.slice(1, -1)}]*$`;

/** Values allowed from a list (JSON Schema has no empty `enum`: an empty list allows nothing). */
function oneOfValues(values: readonly string[]): Record<string, unknown> {
  return values.length > 0 ? { enum: values } : { not: {} };
}

/** One field as a JSON Schema, with the host's bounds (text length, choices) added. */
function fieldSchema(field: FieldSchema): Record<string, unknown> {
  switch (field.type) {
    case "string": {
      const choices = choicesOf(field);
      if (choices) return { type: "string", pattern: NO_CONTROL, ...oneOfValues(choices) };
      return {
        type: "string",
        pattern: NO_CONTROL,
        maxLength: Math.min(field.maxLength ?? MAX_STRING_CHARS, MAX_STRING_CHARS),
        ...(field.minLength !== undefined ? { minLength: field.minLength } : {}),
        ...(field.format !== undefined
          ? { format: KNOWN_FORMATS.includes(field.format) ? field.format : "warrant-unknown" }
          : {}),
      };
    }
    case "number":
    case "integer":
      return {
        type: field.type,
        ...(field.minimum !== undefined ? { minimum: field.minimum } : {}),
        ...(field.maximum !== undefined ? { maximum: field.maximum } : {}),
      };
    case "boolean":
      return { type: "boolean" };
    case "array":
      return {
        type: "array",
        items: { type: "string", ...oneOfValues(itemChoicesOf(field)) },
        uniqueItems: true,
        maxItems: Math.min(field.maxItems ?? MAX_CHOICES, MAX_CHOICES),
        ...(field.minItems !== undefined ? { minItems: field.minItems } : {}),
      };
  }
}

/**
 * A form as ajv checks it. Field names are the server's text (ajv skips a
 * property named `__proto__`, and none of them should reach generated code),
 * so the schema names the form's fields `f0`, `f1`, … and every other name
 * (an unknown field, an undeclared required one) `u0`, `u1`, …; an answer is
 * renamed the same way before it is checked.
 */
interface FormValidator {
  keys: Map<string, string>;
  names: Map<string, string>;
  answer: ValidateFunction;
  defaults: ValidateFunction;
}

const compiled = new WeakMap<RequestedSchema, FormValidator>();

/** The key of a name the form's fields do not declare (an undeclared required field). */
function keyOf(form: Pick<FormValidator, "keys" | "names">, name: string): string {
  let key = form.keys.get(name);
  if (key === undefined) {
    key = `u${form.keys.size}`;
    form.keys.set(name, key);
    form.names.set(key, name);
  }
  return key;
}

function compileForm(schema: RequestedSchema): FormValidator {
  const keys = new Map<string, string>();
  const names = new Map<string, string>();
  const properties: Record<string, unknown> = {};
  for (const [index, [name, field]] of Object.entries(schema.properties).entries()) {
    keys.set(name, `f${index}`);
    names.set(`f${index}`, name);
    properties[`f${index}`] = fieldSchema(field);
  }
  // A required field with a default is never missing: its default fills it in.
  const required = [...new Set(schema.required ?? [])]
    .filter((name) => !(Object.hasOwn(schema.properties, name) && schema.properties[name]?.default !== undefined))
    .map((name) => keyOf({ keys, names }, name));
  const whole = { type: "object", properties, additionalProperties: false, maxProperties: MAX_FIELDS };
  const answer = { ...whole, required };
  const validators = { answer: ajv.compile(answer), defaults: ajv.compile(whole) };
  // Forms come and go with each question: the compiled functions are kept here, not in ajv's cache.
  ajv.removeSchema(answer);
  ajv.removeSchema(whole);
  return { keys, names, ...validators };
}

function formOf(schema: RequestedSchema): FormValidator {
  let form = compiled.get(schema);
  if (!form) {
    form = compileForm(schema);
    compiled.set(schema, form);
  }
  return form;
}

/** `values` with the form's keys for names; a name the form does not know gets a key of its own (`x0`, …). */
function renamed(form: FormValidator, values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [index, [name, value]] of Object.entries(values).entries())
    out[form.keys.get(name) ?? `x${index}`] = value;
  return out;
}

/** The field an error is about: the first step of its path, or the property it names, by the form's name. */
function fieldOf(form: FormValidator, error: ErrorObject): string {
  const params = error.params as { additionalProperty?: string; missingProperty?: string };
  const key =
    error.keyword === "additionalProperties"
      ? params.additionalProperty
      : error.keyword === "required"
        ? params.missingProperty
        : error.instancePath.split("/")[1];
  return form.names.get(key ?? "") ?? "";
}

/** Each field's first problem, by field name. */
function problemsByField(form: FormValidator, errors: readonly ErrorObject[]): Map<string, Problem> {
  const byField = new Map<string, Problem>();
  for (const error of errors) {
    const problem = PROBLEM_OF[error.keyword];
    if (problem === undefined || error.instancePath === "") continue;
    const field = fieldOf(form, error);
    const known = byField.get(field);
    if (known === undefined || RANK.indexOf(problem) < RANK.indexOf(known)) byField.set(field, problem);
  }
  return byField;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Checks an accepted answer against the form, after filling in its defaults.
 * Problems name the field (own properties of the form only: a field named
 * `__proto__` or `constructor` is unknown unless the form declares it), in
 * the answer's order, then the missing required fields in the form's order.
 */
export function validateAnswer(schema: RequestedSchema, answer: unknown): AnswerCheck {
  const form = formOf(schema);
  // Not an object at all: ajv's answer for the whole is the only problem.
  if (!isRecord(answer) && !form.answer(answer)) return { ok: false, problems: [{ field: "", problem: "wrong_type" }] };
  const given = answer as Record<string, unknown>;
  if (form.answer(renamed(form, given))) {
    const content: AnswerContent = {};
    for (const [name, value] of Object.entries(given)) put(content, name, value as AnswerValue);
    return { ok: true, content: withDefaults(schema, content) };
  }
  const errors = form.answer.errors ?? [];
  if (errors.some((error) => error.instancePath === "" && error.keyword === "maxProperties"))
    return { ok: false, problems: [{ field: "", problem: "too_long" }] };
  const byField = problemsByField(form, errors);
  const problems: FieldProblem[] = [];
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(schema.properties, name)) problems.push({ field: name.slice(0, 64), problem: "unknown_field" });
    else {
      const problem = byField.get(name);
      if (problem) problems.push({ field: name, problem });
    }
  }
  const missing = new Set(errors.filter((error) => error.keyword === "required").map((error) => fieldOf(form, error)));
  for (const name of schema.required ?? [])
    if (missing.has(name) && !problems.some((problem) => problem.field === name))
      problems.push({ field: name, problem: "missing" });
  return { ok: false, problems };
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
  const form = formOf(schema);
  const fits = form.defaults(renamed(form, defaultsOf(schema)));
  const misfits = fits ? new Map<string, Problem>() : problemsByField(form, form.defaults.errors ?? []);
  for (const name of names) {
    if (name.length === 0 || name.length > 64 || CONTROL.test(name))
      return { ok: false, reason: "a field name is empty, too long or has control characters" };
    if (misfits.has(name)) return { ok: false, reason: `the default of ${name} does not fit its own field` };
  }
  for (const name of schema.required ?? [])
    if (!Object.hasOwn(schema.properties, name)) return { ok: false, reason: `required field ${name} is not defined` };
  return { ok: true };
}
