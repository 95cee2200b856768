/**
 * The Cedar engine (`@cedar-policy/cedar-wasm`, embedded): policy files and
 * a schema file, validated together when loaded; each `authorized` check is
 * one Cedar request. Default deny. A `forbid` names the refusal's code with
 * `@code("access_denied")` (or `tool_not_permitted`, the default); a deny no
 * policy determined is `tool_not_permitted`. Policy ids come from `@id("…")`.
 * Anything Cedar cannot evaluate (a context the schema does not allow, an
 * action the schema lacks, an evaluation error) refuses the call with
 * `engine_error` set: fail closed.
 *
 * Who may answer a review is the `approve` action when the schema declares
 * it (principal: the approver, resource: the run's owner); without it, the
 * review policy's rule as the built-in engine applies it.
 *
 * Cost: the policies are preparsed once per action (only those whose scope
 * can match it), a request carries only the context its policies read, and
 * decisions are cached on exactly what they depend on (the action, the
 * principal's and the resource's attributes, the context values the
 * policies read) until the files change.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";
import { ACCESS_DENIED_MESSAGE } from "./authorization.js";
import { type ActionPlan, contextKey, planFor, prunedContext, reachOf } from "./cedar-reach.js";
import { convertRecord, resourceOf, timeOf, type TypeNode, userEntity } from "./cedar-request.js";
import { APPROVE_ACTION, NAMESPACE } from "./cedar-schema.js";
import type { CatalogTool } from "./contracts.js";
import {
  type ApproveAnswer,
  type ApproveRequest,
  type AuthorizationAnswer,
  builtinApprove,
  type PolicyEngine,
} from "./engine.js";

export { timeOf } from "./cedar-request.js";

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
  /** The actions (or groups) its scope names (null: any), the context paths its conditions read. */
  actions: string[] | null;
  contextPaths: string[][];
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
export function compileCedar(
  sources: CedarSources,
  options: { cacheDecisions?: boolean } = {},
): { engine?: CedarEngine; problems: CedarProblem[] } {
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
      const reach = reachOf(json.json);
      policies.set(id, {
        id,
        file,
        text: policyText,
        effect: json.json.effect,
        code: code as CedarPolicy["code"],
        actions: reach.actions,
        contextPaths: reach.contextPaths,
      });
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
  const namespace = schemaJson.json[NAMESPACE];
  if (!namespace) return { problems: [{ file: sources.schemaFile, message: `no namespace ${NAMESPACE}` }] };
  generation += 1;
  const plans = new Map<string, ActionPlan>();
  for (const action of Object.keys(namespace.actions)) {
    const plan = planFor(action, namespace, policies, `warrant-policies-${generation}/${action}`);
    if (plan.problem) return { problems: [{ file: "?", message: plan.problem }] };
    plans.set(action, plan);
  }
  const cacheLimit = options.cacheDecisions === false ? 0 : CACHE_LIMIT;
  return { engine: cedarEngine({ namespace, policies, plans, cacheLimit }), problems: [] };
}

function describe(error: cedar.DetailedError): string {
  return error.help ? `${error.message} (${error.help})` : error.message;
}

/** Decisions kept per engine (cleared when full: a bound, not an eviction policy). */
const CACHE_LIMIT = 10_000;
const SEP = "\u0001";

type Evaluated =
  | { ok: true; decision: cedar.Decision; reasons: string[] }
  | { ok: false; engineError: "evaluation_error" | "missing_entity"; detail: string };

function cedarEngine(input: {
  namespace: cedar.NamespaceDefinition<string>;
  policies: Map<string, CedarPolicy>;
  plans: Map<string, ActionPlan>;
  /** Decisions kept at most (0: none, each check asks Cedar: for measuring the uncached cost). */
  cacheLimit: number;
}): CedarEngine {
  const user = input.namespace.entityTypes["User"] as { shape?: TypeNode } | undefined;
  const grantKinds = Object.keys(user?.shape?.attributes?.["grants"]?.attributes ?? {});
  const argTypes = new Map<string, Record<string, TypeNode>>();
  for (const [name, action] of Object.entries(input.namespace.actions)) {
    const context = action.appliesTo?.context as TypeNode | undefined;
    if (context?.attributes?.["args"]?.attributes) argTypes.set(name, context.attributes["args"].attributes);
  }
  const approvePlan = input.plans.get(APPROVE_ACTION);
  const type = (kind: string) => `${NAMESPACE}::${kind}`;
  const cache = new Map<string, Evaluated>();
  /** One Cedar request for `action`, answered from the cache when its inputs are the same. */
  const evaluate = (
    action: string,
    plan: ActionPlan,
    principal: cedar.EntityJson,
    resource: cedar.EntityJson,
    context: Record<string, unknown>,
    key: string,
  ): Evaluated => {
    const cached = cache.get(key);
    if (cached) return cached;
    let evaluated: Evaluated;
    if (plan.setId === undefined) evaluated = { ok: true, decision: "deny", reasons: [] };
    else {
      const same = JSON.stringify(principal.uid) === JSON.stringify(resource.uid);
      const answer = cedar.statefulIsAuthorized({
        principal: principal.uid,
        action: { type: type("Action"), id: action },
        resource: resource.uid,
        context: prunedContext(context, plan.paths) as cedar.Context,
        // The request is built to the schema (arguments converted to its types, entities from the principal), and
        // the policies were type-checked against it when loaded: validating each request again costs ~40% a call.
        preparsedPolicySetId: plan.setId,
        validateRequest: false,
        entities: same ? [principal] : [principal, resource],
      });
      evaluated = settle(answer);
    }
    if (cache.size >= input.cacheLimit) cache.clear();
    if (input.cacheLimit > 0) cache.set(key, evaluated);
    return evaluated;
  };
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
      const plan = input.plans.get(request.tool.name);
      if (!declared || !plan)
        return failClosed("missing_entity", `the Cedar schema has no action ${request.tool.name}`);
      let args: Record<string, unknown>;
      try {
        args = convertRecord(request.args, declared);
      } catch (error) {
        return failClosed("evaluation_error", (error as Error).message);
      }
      const resource = resourceOf(request.tool, request.args);
      const context = {
        stage: request.stage,
        ...(plan.needsTime ? { time: timeOf(request.now, request.principal.time_zone) } : {}),
        run: { budget_left: request.run.budgetLeft, repeats: request.run.repeats },
        reviewed: request.reviewed,
        args,
      };
      const principal = userEntity(request.principal, grantKinds);
      const resourceKey = JSON.stringify([resource.id, resource.attrs]);
      const key = [request.tool.name, principal.key, resourceKey, contextKey(context, plan.paths)].join(SEP);
      const resourceEntity = { uid: { type: type("Resource"), id: resource.id }, attrs: resource.attrs, parents: [] };
      const evaluated = evaluate(request.tool.name, plan, principal.entity, resourceEntity, context, key);
      if (!evaluated.ok) return failClosed(evaluated.engineError, evaluated.detail);
      if (evaluated.decision === "allow") return { allow: true, policies: evaluated.reasons };
      return denial(request.tool, evaluated.reasons, input.policies);
    },
    approve(request) {
      if (!approvePlan) return builtinApprove(request);
      return approveWith(request, approvePlan, (approver, owner, context, key) =>
        evaluate(APPROVE_ACTION, approvePlan, approver, owner, context, key),
      );
    },
  };

  function approveWith(
    request: ApproveRequest,
    plan: ActionPlan,
    ask: (
      approver: cedar.EntityJson,
      owner: cedar.EntityJson,
      context: Record<string, unknown>,
      key: string,
    ) => Evaluated,
  ): ApproveAnswer {
    const approver = userEntity(request.approver, grantKinds);
    const owner = userEntity(request.owner, grantKinds);
    const isOwner =
      request.approver.user_id === request.owner.user_id && request.approver.tenant === request.owner.tenant;
    // One entity a user id: the same id in two tenants cannot be told apart, so it is refused (fail closed).
    if (!isOwner && request.approver.user_id === request.owner.user_id)
      return {
        allow: false,
        policies: [],
        engineError: "missing_entity",
        detail: "approver and owner share a user id",
      };
    const context = {
      tool: request.tool,
      rule: request.rule,
      is_owner: isOwner,
      ...(plan.needsTime ? { time: timeOf(request.now, request.approver.time_zone) } : {}),
    };
    const key = [APPROVE_ACTION, approver.key, owner.key, contextKey(context, plan.paths)].join(SEP);
    const evaluated = ask(approver.entity, owner.entity, context, key);
    if (!evaluated.ok)
      return { allow: false, policies: [], engineError: evaluated.engineError, detail: evaluated.detail.slice(0, 300) };
    return evaluated.decision === "allow"
      ? { allow: true, policies: evaluated.reasons }
      : { allow: false, policies: evaluated.reasons };
  }
}

/** A Cedar answer as a decision, or why it is none: any policy that errored makes the whole answer fail closed. */
function settle(answer: cedar.AuthorizationAnswer): Evaluated {
  if (answer.type === "failure")
    return { ok: false, engineError: "evaluation_error", detail: answer.errors.map(describe).join("; ") };
  const { decision, diagnostics } = answer.response;
  if (diagnostics.errors.length > 0) {
    const missing = diagnostics.errors.some((entry) => entry.error.message.includes("does not exist"));
    const detail = diagnostics.errors.map((entry) => `${entry.policyId}: ${entry.error.message}`).join("; ");
    return { ok: false, engineError: missing ? "missing_entity" : "evaluation_error", detail };
  }
  return { ok: true, decision, reasons: diagnostics.reason };
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
    approve: (request) => current().approve(request),
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
    approve: () => ({ allow: false, policies: [], engineError: "policies_invalid", detail: detail.slice(0, 300) }),
  };
}
