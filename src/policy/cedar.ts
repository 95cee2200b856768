/**
 * The Cedar engine (`@cedar-policy/cedar-wasm`, embedded): policy files and
 * a schema file, validated together when loaded; each `authorized` check is
 * one Cedar request. Default deny. A `forbid` names the refusal's code with
 * `@code("access_denied")` (or `tool_not_permitted`, the default); a deny no
 * policy determined is `tool_not_permitted`. Policy ids come from `@id("…")`.
 * Anything Cedar cannot evaluate (a context the schema does not allow, an
 * action the schema lacks, an evaluation error) refuses the call with
 * `engine_error` set: fail closed.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import type { Principal } from "../auth/principal.js";
import { ACCESS_DENIED_MESSAGE } from "./authorization.js";
import { NAMESPACE } from "./cedar-schema.js";
import type { CatalogTool } from "./contracts.js";
import type { AuthorizationAnswer, PolicyEngine } from "./engine.js";

/** One Cedar diagnostic, with the file (and policy id) it is about. */
export interface CedarProblem {
  file: string;
  policy?: string;
  message: string;
}

export interface CedarPolicy {
  id: string;
  file: string;
  /** The policy's text as written. */
  text: string;
  effect: "permit" | "forbid";
  /** The `@code` annotation of a forbid. */
  code: "tool_not_permitted" | "access_denied";
}

export interface CedarSources {
  schemaFile: string;
  schema: string;
  policies: { file: string; text: string }[];
}

export interface CedarEngine extends PolicyEngine {
  readonly name: "cedar";
  readonly policies: ReadonlyMap<string, CedarPolicy>;
  /** Action names the schema declares (one per contracted tool). */
  readonly actions: ReadonlySet<string>;
  /** The action groups an action is in (`risk:read`, …). */
  actionGroups(action: string): string[];
}

type TypeNode = { type: string; element?: TypeNode; attributes?: Record<string, TypeNode>; name?: string };

const CODES = ["tool_not_permitted", "access_denied"] as const;
let generation = 0;

/** Reads the schema and policy files (paths as given, relative ones from `base`). */
export function readCedarSources(
  base: string,
  files: { schema: string; policies: readonly string[] },
): { sources?: CedarSources; problems: CedarProblem[] } {
  const read = (file: string): string | CedarProblem => {
    const full = path.resolve(base, file);
    try {
      return readFileSync(full, "utf8");
    } catch (error) {
      return { file, message: `cannot read ${full}: ${(error as NodeJS.ErrnoException).code ?? "error"}` };
    }
  };
  const schema = read(files.schema);
  const policies = files.policies.map((file) => ({ file, text: read(file) }));
  const problems = [schema, ...policies.map((entry) => entry.text)].filter(
    (entry): entry is CedarProblem => typeof entry !== "string",
  );
  if (typeof schema !== "string" || problems.length > 0) return { problems };
  return {
    sources: {
      schemaFile: files.schema,
      schema,
      policies: policies.map((entry) => ({ file: entry.file, text: entry.text as string })),
    },
    problems: [],
  };
}

/** What Cedar finds wrong in the sources (syntax, duplicate ids, policies that do not type-check), else the engine. */
export function compileCedar(sources: CedarSources): { engine?: CedarEngine; problems: CedarProblem[] } {
  const problems: CedarProblem[] = [];
  const schemaJson = cedar.schemaToJsonWithResolvedTypes(sources.schema);
  if (schemaJson.type === "failure") {
    for (const error of schemaJson.errors) problems.push({ file: sources.schemaFile, message: describe(error) });
    return { problems };
  }
  const policies = new Map<string, CedarPolicy>();
  for (const { file, text } of sources.policies) {
    const parts = cedar.policySetTextToParts(text);
    if (parts.type === "failure") {
      for (const error of parts.errors) problems.push({ file, message: describe(error) });
      continue;
    }
    if (parts.policy_templates.length > 0) problems.push({ file, message: "templates are not supported" });
    parts.policies.forEach((policyText, index) => {
      const json = cedar.policyToJson(policyText);
      if (json.type === "failure") {
        for (const error of json.errors) problems.push({ file, message: describe(error) });
        return;
      }
      const annotations = json.json.annotations ?? {};
      const id = annotations["id"] ?? `${path.basename(file)}#${index}`;
      const code = annotations["code"] ?? "tool_not_permitted";
      if (policies.has(id)) problems.push({ file, policy: id, message: `duplicate policy id "${id}"` });
      if (!(CODES as readonly string[]).includes(code))
        problems.push({ file, policy: id, message: `@code must be one of ${CODES.join(", ")}` });
      policies.set(id, { id, file, text: policyText, effect: json.json.effect, code: code as CedarPolicy["code"] });
    });
  }
  if (problems.length > 0) return { problems };
  const staticPolicies = Object.fromEntries([...policies].map(([id, policy]) => [id, policy.text]));
  const validation = cedar.validate({ schema: sources.schema, policies: { staticPolicies } });
  if (validation.type === "failure") {
    for (const error of validation.errors) problems.push({ file: sources.schemaFile, message: describe(error) });
    return { problems };
  }
  for (const { policyId, error } of validation.validationErrors) {
    problems.push({ file: policies.get(policyId)?.file ?? "?", policy: policyId, message: describe(error) });
  }
  if (problems.length > 0) return { problems };
  generation += 1;
  const setId = `warrant-policies-${generation}`;
  const preparsed = cedar.preparsePolicySet(setId, { staticPolicies });
  if (preparsed.type === "failure")
    return { problems: preparsed.errors.map((error) => ({ file: "?", message: describe(error) })) };
  const namespace = schemaJson.json[NAMESPACE];
  if (!namespace) return { problems: [{ file: sources.schemaFile, message: `no namespace ${NAMESPACE}` }] };
  return { engine: cedarEngine({ namespace, policies, setId }), problems: [] };
}

function describe(error: cedar.DetailedError): string {
  return error.help ? `${error.message} (${error.help})` : error.message;
}

function cedarEngine(input: {
  namespace: cedar.NamespaceDefinition<string>;
  policies: Map<string, CedarPolicy>;
  setId: string;
}): CedarEngine {
  const user = input.namespace.entityTypes["User"] as { shape?: TypeNode } | undefined;
  const grantKinds = Object.keys(user?.shape?.attributes?.["grants"]?.attributes ?? {});
  const argTypes = new Map<string, Record<string, TypeNode>>();
  for (const [name, action] of Object.entries(input.namespace.actions)) {
    const context = action.appliesTo?.context as TypeNode | undefined;
    if (context?.attributes?.["args"]?.attributes) argTypes.set(name, context.attributes["args"].attributes);
  }
  const type = (kind: string) => `${NAMESPACE}::${kind}`;
  return {
    name: "cedar",
    policies: input.policies,
    actions: new Set(argTypes.keys()),
    actionGroups: (action) =>
      Object.hasOwn(input.namespace.actions, action)
        ? (input.namespace.actions[action]?.memberOf ?? []).map((group) => group.id)
        : [],
    authorize(request) {
      const declared = argTypes.get(request.tool.name);
      if (!declared) return failClosed("missing_entity", `the Cedar schema has no action ${request.tool.name}`);
      let args: Record<string, unknown>;
      try {
        args = convertRecord(request.args, declared);
      } catch (error) {
        return failClosed("evaluation_error", (error as Error).message);
      }
      const resource = resourceOf(request.tool, request.args);
      const answer = cedar.statefulIsAuthorized({
        principal: { type: type("User"), id: request.principal.user_id },
        action: { type: type("Action"), id: request.tool.name },
        resource: { type: type("Resource"), id: resource.id },
        context: {
          stage: request.stage,
          time: timeOf(request.now, request.principal.time_zone),
          run: { budget_left: request.run.budgetLeft, repeats: request.run.repeats },
          reviewed: request.reviewed,
          args: args as cedar.Context,
        },
        // The request is built to the schema (arguments converted to its types, entities from the principal), and
        // the policies were type-checked against it when loaded: validating each request again costs ~40% a call.
        preparsedPolicySetId: input.setId,
        validateRequest: false,
        entities: [
          userEntity(request.principal, grantKinds),
          { uid: { type: type("Resource"), id: resource.id }, attrs: resource.attrs, parents: [] },
        ],
      });
      if (answer.type === "failure") return failClosed("evaluation_error", answer.errors.map(describe).join("; "));
      const { decision, diagnostics } = answer.response;
      if (diagnostics.errors.length > 0) {
        const missing = diagnostics.errors.some((entry) => entry.error.message.includes("does not exist"));
        const detail = diagnostics.errors.map((entry) => `${entry.policyId}: ${entry.error.message}`).join("; ");
        return failClosed(missing ? "missing_entity" : "evaluation_error", detail);
      }
      if (decision === "allow") return { allow: true, policies: diagnostics.reason };
      return denial(request.tool, diagnostics.reason, input.policies);
    },
  };
}

function failClosed(engineError: "evaluation_error" | "missing_entity", detail: string): AuthorizationAnswer {
  return {
    allow: false,
    code: "access_denied",
    message: `the policy engine could not decide this call (${engineError}): ${detail.slice(0, 300)}`,
    policies: [],
    engineError,
  };
}

/** The refusal: `tool_not_permitted` wins over `access_denied` (scopes before resources, as the built-in engine). */
function denial(tool: CatalogTool, reasons: string[], policies: Map<string, CedarPolicy>): AuthorizationAnswer {
  const codes = reasons.map((id) => policies.get(id)?.code ?? "tool_not_permitted");
  if (reasons.length === 0 || codes.includes("tool_not_permitted"))
    return {
      allow: false,
      code: "tool_not_permitted",
      message: `${tool.name} is not available to you`,
      withheld: "scope",
      policies: reasons,
    };
  return { allow: false, code: "access_denied", message: ACCESS_DENIED_MESSAGE, policies: reasons };
}

function userEntity(principal: Principal, grantKinds: readonly string[]): cedar.EntityJson {
  const grants: Record<string, string[]> = {};
  for (const kind of grantKinds)
    grants[kind] = Object.hasOwn(principal.grants, kind) ? [...(principal.grants[kind] ?? [])] : [];
  return {
    uid: { type: `${NAMESPACE}::User`, id: principal.user_id },
    attrs: { tenant: principal.tenant, role: principal.role, scopes: [...principal.scopes], grants },
    parents: [
      { type: `${NAMESPACE}::Role`, id: principal.role },
      { type: `${NAMESPACE}::Tenant`, id: principal.tenant },
    ],
  };
}

/** What the tool's resource rule names: the argument's value and the owner key its pattern extracts. */
function resourceOf(
  tool: CatalogTool,
  args: Record<string, unknown>,
): { id: string; attrs: { named: boolean; matched: boolean; field: string; owner: string } } {
  const rule = tool.contract.resource;
  if (!rule || !Object.hasOwn(args, rule.argument))
    return { id: "", attrs: { named: false, matched: false, field: rule?.principal_field ?? "", owner: "" } };
  const value = args[rule.argument];
  const owner = typeof value === "string" ? patternOf(rule.pattern).exec(value)?.[1] : undefined;
  return {
    id: typeof value === "string" ? value : JSON.stringify(value),
    attrs: { named: true, matched: owner !== undefined, field: rule.principal_field, owner: owner ?? "" },
  };
}

const patterns = new Map<string, RegExp>();
function patternOf(source: string): RegExp {
  let regex = patterns.get(source);
  if (!regex) {
    regex = new RegExp(source);
    patterns.set(source, regex);
  }
  return regex;
}

const formats = new Map<string, Intl.DateTimeFormat>();
/** Hour, minute and weekday (0 = Sunday) in the zone; UTC without one or for a zone the runtime does not know. */
export function timeOf(
  now: number,
  zone: string | undefined,
): { epoch_s: number; hour: number; minute: number; weekday: number } {
  const key = zone ?? "UTC";
  let format = formats.get(key);
  if (!format) {
    try {
      format = new Intl.DateTimeFormat("en-US", {
        timeZone: key,
        hourCycle: "h23",
        hour: "numeric",
        minute: "numeric",
        weekday: "short",
      });
    } catch {
      format = new Intl.DateTimeFormat("en-US", {
        timeZone: "UTC",
        hourCycle: "h23",
        hour: "numeric",
        minute: "numeric",
        weekday: "short",
      });
    }
    formats.set(key, format);
  }
  const parts = Object.fromEntries(format.formatToParts(now).map((part) => [part.type, part.value]));
  const weekday = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].indexOf(parts["weekday"] ?? "");
  return {
    epoch_s: Math.floor(now / 1000),
    hour: Number(parts["hour"]),
    minute: Number(parts["minute"]),
    weekday,
  };
}

/** An argument value as the schema declares it; throws when it does not fit (fail closed). */
function convert(value: unknown, type: TypeNode, where: string): unknown {
  switch (type.type) {
    case "String":
      if (typeof value === "string") return value;
      break;
    case "Long":
      if (typeof value === "number" && Number.isSafeInteger(value)) return value;
      break;
    case "Bool":
    case "Boolean":
      if (typeof value === "boolean") return value;
      break;
    case "Set":
      if (Array.isArray(value) && type.element)
        return value.map((item, i) => convert(item, type.element as TypeNode, `${where}[${i}]`));
      break;
    case "Record":
      if (typeof value === "object" && value !== null && !Array.isArray(value))
        return convertRecord(value as Record<string, unknown>, type.attributes ?? {}, where);
      break;
  }
  throw new Error(`argument ${where} is not a ${type.type} as the Cedar schema declares`);
}

function convertRecord(value: Record<string, unknown>, attributes: Record<string, TypeNode>, where = "args") {
  const out: Record<string, unknown> = {};
  for (const [name, type] of Object.entries(attributes)) {
    if (!Object.hasOwn(value, name) || value[name] === null || value[name] === undefined) continue;
    out[name] = convert(value[name], type, `${where}.${name}`);
  }
  return out;
}

/**
 * The engine over files, re-read when one of them changes (modification time
 * and size, checked at each use like the principal directory). A change that
 * no longer compiles refuses every call with `policies_invalid` until fixed:
 * fail closed, never the old policies silently.
 */
export function watchedCedarEngine(base: string, files: { schema: string; policies: readonly string[] }): PolicyEngine {
  let cached: { key: string; engine: PolicyEngine } | undefined;
  const current = (): PolicyEngine => {
    let key: string;
    try {
      key = [files.schema, ...files.policies]
        .map((file) => {
          const info = statSync(path.resolve(base, file));
          return `${info.mtimeMs}:${info.size}`;
        })
        .join("|");
    } catch (error) {
      key = `missing:${(error as Error).message}`;
    }
    if (cached?.key !== key) cached = { key, engine: loadEngine(base, files) };
    return cached.engine;
  };
  return {
    name: "cedar",
    authorize: (request) => current().authorize(request),
  };
}

function loadEngine(base: string, files: { schema: string; policies: readonly string[] }): PolicyEngine {
  const { sources, problems } = readCedarSources(base, files);
  const compiled = sources ? compileCedar(sources) : { problems };
  if (compiled.engine) return compiled.engine;
  const detail = compiled.problems.map((problem) => `${problem.file}: ${problem.message}`).join("; ");
  return {
    name: "cedar",
    authorize: () => ({
      allow: false,
      code: "access_denied",
      message: `the policy engine could not decide this call (policies_invalid): ${detail.slice(0, 300)}`,
      policies: [],
      engineError: "policies_invalid",
    }),
  };
}
