/**
 * What a Cedar policy can apply to and what it reads, worked out once when
 * the policies load: the actions its scope names (so each action is asked
 * with only the policies that can match it) and the paths into the context
 * its conditions read (so a decision is cached on exactly those values and
 * the request carries only them). Wherever the analysis cannot tell, it
 * assumes more is read (the whole context), never less.
 */
import * as cedar from "@cedar-policy/cedar-wasm/nodejs";

export interface PolicyReach {
  /** Action ids (or groups) its scope names; null: any action. */
  actions: string[] | null;
  /** Paths into the context its conditions read; `[]` is the whole context. */
  contextPaths: string[][];
}

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && !Array.isArray(value);

function uidOf(value: unknown): string | undefined {
  if (!isNode(value)) return undefined;
  const inner = isNode(value["__entity"]) ? value["__entity"] : value;
  return typeof inner["id"] === "string" ? inner["id"] : undefined;
}

function actionsOf(constraint: cedar.ActionConstraint): string[] | null {
  if (constraint.op === "All") return null;
  const entities = "entities" in constraint ? constraint.entities : "entity" in constraint ? [constraint.entity] : [];
  const ids = entities.map(uidOf);
  return ids.every((id): id is string => id !== undefined) ? ids : null;
}

/** `context`, or `context.a.b…`: the path, else null. */
function contextPath(node: Node): string[] | null {
  if (node["Var"] === "context" && Object.keys(node).length === 1) return [];
  const dot = node["."];
  if (isNode(dot) && typeof dot["attr"] === "string" && isNode(dot["left"])) {
    const left = contextPath(dot["left"]);
    return left ? [...left, dot["attr"]] : null;
  }
  return null;
}

function collect(node: unknown, out: string[][]): void {
  if (Array.isArray(node)) {
    for (const item of node) collect(item, out);
    return;
  }
  if (!isNode(node)) return;
  const path = contextPath(node);
  if (path) {
    out.push(path);
    return;
  }
  const has = node["has"];
  if (isNode(has) && isNode(has["left"])) {
    const left = contextPath(has["left"]);
    const attrs = Array.isArray(has["attr"]) ? has["attr"] : [has["attr"]];
    if (left && attrs.every((attr): attr is string => typeof attr === "string")) {
      out.push([...left, ...attrs]);
      return;
    }
  }
  for (const value of Object.values(node)) collect(value, out);
}

export function reachOf(policy: cedar.PolicyJson): PolicyReach {
  const contextPaths: string[][] = [];
  collect(policy.conditions, contextPaths);
  return { actions: actionsOf(policy.action), contextPaths };
}

/** Whether a policy whose scope names `named` can apply to an action in `lineage` (itself and its groups). */
export function applies(named: string[] | null, lineage: ReadonlySet<string>): boolean {
  return named === null || named.some((id) => lineage.has(id));
}

/** Paths with the ones another covers left out (`args` covers `args.limit`), sorted. */
export function coveringPaths(paths: readonly string[][]): string[][] {
  const unique = [...new Map(paths.map((path) => [path.join("\u0000"), path])).values()];
  return unique
    .filter((path) => !unique.some((other) => other.length < path.length && other.every((part, i) => path[i] === part)))
    .sort((a, b) => a.join("\u0000").localeCompare(b.join("\u0000")));
}

/**
 * The context with only the values at `paths`, the records on the way to them kept (a policy may read
 * `context.args` whole-record facts like `has`); the whole context when a path is `[]`.
 */
export function prunedContext(context: Record<string, unknown>, paths: readonly string[][]): Record<string, unknown> {
  if (paths.some((path) => path.length === 0)) return context;
  const out: Record<string, unknown> = {};
  for (const path of paths) {
    let from: unknown = context;
    let to = out;
    for (const [index, part] of path.entries()) {
      if (!isNode(from) || !Object.hasOwn(from, part)) break;
      from = from[part];
      if (index === path.length - 1) to[part] = from;
      else {
        if (!isNode(to[part])) to[part] = {};
        to = to[part] as Record<string, unknown>;
      }
    }
  }
  return out;
}

/** The values a decision depends on in the context, as one string. */
export function contextKey(context: Record<string, unknown>, paths: readonly string[][]): string {
  if (paths.some((path) => path.length === 0)) return JSON.stringify(context);
  let key = "";
  for (const path of paths) {
    let value: unknown = context;
    for (const part of path) value = isNode(value) && Object.hasOwn(value, part) ? value[part] : undefined;
    key += `${value === undefined ? "-" : JSON.stringify(value)}\u0000`;
  }
  return key;
}

/** One action's share of the policies: those whose scope can match it, preparsed under their own id. */
export interface ActionPlan {
  /** The preparsed set's id; undefined when no policy can match (default deny without asking). */
  setId: string | undefined;
  /** The context paths those policies read. */
  paths: string[][];
  needsTime: boolean;
  problem?: string;
}

export function planFor(
  action: string,
  namespace: cedar.NamespaceDefinition<string>,
  policies: ReadonlyMap<string, { id: string; text: string; actions: string[] | null; contextPaths: string[][] }>,
  setId: string,
): ActionPlan {
  const lineage = new Set<string>();
  const visit = (id: string) => {
    if (lineage.has(id)) return;
    lineage.add(id);
    const groups = Object.hasOwn(namespace.actions, id) ? (namespace.actions[id]?.memberOf ?? []) : [];
    for (const group of groups) visit(group.id);
  };
  visit(action);
  const matching = [...policies.values()].filter((policy) => applies(policy.actions, lineage));
  const paths = coveringPaths(matching.flatMap((policy) => policy.contextPaths));
  const needsTime = paths.some((entry) => entry.length === 0 || entry[0] === "time");
  if (matching.length === 0) return { setId: undefined, paths, needsTime };
  const preparsed = cedar.preparsePolicySet(setId, {
    staticPolicies: Object.fromEntries(matching.map((policy) => [policy.id, policy.text])),
  });
  if (preparsed.type === "failure")
    return { setId, paths, needsTime, problem: preparsed.errors.map((error) => error.message).join("; ") };
  return { setId, paths, needsTime };
}
