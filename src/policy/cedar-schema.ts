/**
 * The Cedar schema Warrant's requests follow, generated from the catalog:
 * `User` (tenant, role, scopes, grants by kind) in its `Role` and `Tenant`,
 * `Resource` (what a tool's resource rule names), one action per contracted
 * tool in the group of its risk, and a context with the stage, the time, the
 * run's counters, the review state and the tool's arguments as its schema
 * declares them (every argument optional: a policy tests `has` first).
 * And the `approve` action: who may answer a review (principal: the
 * approver, resource: the run's owner; context: the tool, the review
 * policy's rule for its risk, whether the approver is the owner, the time).
 * `npm run policy -- schema` prints it; the server checks the file against
 * the catalog at start.
 */
import type { CatalogTool } from "./contracts.js";

export const NAMESPACE = "Warrant";
export const RISK_GROUP_PREFIX = "risk:";
/** The action that decides who may answer a review (not a tool: no contracted tool may take this name). */
export const APPROVE_ACTION = "approve";

/** A JSON Schema value type as a Cedar type, or null when Cedar cannot hold it (numbers that are not integers). */
export function cedarTypeOf(schema: unknown, depth = 0): string | null {
  if (typeof schema !== "object" || schema === null || depth > 4) return null;
  const node = schema as Record<string, unknown>;
  const type = Array.isArray(node["type"]) ? node["type"].find((entry) => entry !== "null") : node["type"];
  if (type === "string") return "String";
  if (type === "integer") return "Long";
  if (type === "boolean") return "Bool";
  if (type === "array") {
    const element = cedarTypeOf(node["items"], depth + 1);
    return element === null ? null : `Set<${element}>`;
  }
  if (type === "object") {
    const record = recordType(node["properties"], depth + 1);
    return record;
  }
  return null;
}

function recordType(properties: unknown, depth: number): string | null {
  if (typeof properties !== "object" || properties === null) return null;
  const fields: string[] = [];
  for (const [name, schema] of Object.entries(properties)) {
    const type = cedarTypeOf(schema, depth);
    if (type !== null) fields.push(`${JSON.stringify(name)}?: ${type}`);
  }
  return `{ ${fields.join(", ")} }`;
}

/** The grant kinds resource rules name (`tenant` is the principal's own field, not a grant). */
export function grantKindsOf(tools: readonly CatalogTool[]): string[] {
  const kinds = tools
    .map((tool) => tool.contract.resource?.principal_field)
    .filter((kind): kind is string => kind !== undefined && kind !== "tenant");
  return [...new Set(kinds)].sort();
}

/**
 * The schema text for a catalog (tools sorted by name, so the file is stable). `grantKinds`: more grant kinds for
 * `User` than the resource rules name (the principal directory's, e.g. `teams` for a team-scoped reviewer rule).
 */
export function cedarSchemaFor(tools: readonly CatalogTool[], grantKinds: readonly string[] = []): string {
  const grants = [...new Set([...grantKindsOf(tools), ...grantKinds])]
    .sort()
    .map((kind) => `${kind}: Set<String>`)
    .join(", ");
  const lines = [
    `namespace ${NAMESPACE} {`,
    "  entity Role;",
    "  entity Tenant;",
    "  entity User in [Role, Tenant] = {",
    "    tenant: String,",
    "    role: String,",
    "    scopes: Set<String>,",
    `    grants: { ${grants} },`,
    "  };",
    "  // What a tool's resource rule names: the argument's value, the owner key its pattern extracts.",
    "  entity Resource = { named: Bool, matched: Bool, field: String, owner: String };",
    "  // The time of the check in the principal's time zone (UTC without one).",
    "  type Time = { epoch_s: Long, hour: Long, minute: Long, weekday: Long };",
    "  type Run = { budget_left: Long, repeats: Long };",
    ...["read", "write_reversible", "write_irreversible"].map((risk) => `  action "${RISK_GROUP_PREFIX}${risk}";`),
    "  // Who may answer a review: the approver (principal) of an action the run's owner (resource) asked for.",
    `  action "${APPROVE_ACTION}" appliesTo {`,
    "    principal: User,",
    "    resource: User,",
    "    context: { tool: String, rule: String, is_owner: Bool, time: Time }",
    "  };",
  ];
  for (const tool of [...tools].sort((a, b) => a.name.localeCompare(b.name))) {
    const args = recordType(tool.model_schema["properties"], 1) ?? "{  }";
    const group = JSON.stringify(RISK_GROUP_PREFIX + tool.contract.risk);
    lines.push(
      `  action ${JSON.stringify(tool.name)} in [${group}] appliesTo {`,
      "    principal: User,",
      "    resource: Resource,",
      `    context: { stage: String, time: Time, run: Run, reviewed: Bool, args: ${args} }`,
      "  };",
    );
  }
  lines.push("}", "");
  return lines.join("\n");
}
