/**
 * Every problem of a config, each with its path: the schema's (all of them,
 * not only the first), then what only the facts around the config can show —
 * what the servers list, who the principals are, which model is configured.
 * Pure: `npm run policy -- check` and the server's start-up gather the facts
 * and print the same lines.
 */
import type { Principal } from "../auth/principal.js";
import { REVIEWER_SCOPE, mayDecide } from "./approval.js";
import { hasScopes } from "./authorization.js";
import { WarrantConfigSchema, type WarrantConfig } from "./config.js";
import { RISKS } from "./contracts.js";

export interface ConfigProblem {
  /** Where in the config, dotted (`tools.read_note.run_bound.case_id`); `(root)` for the whole file. */
  path: string;
  message: string;
  /** Errors stop the server from starting; warnings say what could not be checked. */
  severity: "error" | "warning";
}

/** A tool as its server lists it: only what the checks read. */
export interface ListedToolFacts {
  name: string;
  inputSchema: Record<string, unknown>;
}

/** What the checks know besides the config itself; a fact left out is a check not made. */
export interface ConfigFacts {
  /** Per configured server: its tools as listed now, or why it could not be listed. */
  listed?: Readonly<Record<string, readonly ListedToolFacts[] | { error: string }>>;
  /** The principal directory the deployment serves. */
  principals?: readonly Principal[];
  /** The planner the deployment runs, and its model. */
  model?: { planner: "rules" | "model"; name: string };
}

/** Parses config text and returns every schema problem (an empty list and the config when it is valid). */
export function parseConfigProblems(text: string): { config?: WarrantConfig; problems: ConfigProblem[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problems: [error_("(root)", `is not valid JSON (${(error as Error).message})`)] };
  }
  const parsed = WarrantConfigSchema.safeParse(json);
  if (parsed.success) return { config: parsed.data, problems: [] };
  return {
    problems: parsed.error.issues.map((issue) =>
      error_(issue.path.length > 0 ? issue.path.join(".") : "(root)", issue.message),
    ),
  };
}

/** The problems of a valid config that its facts reveal, in config order. */
export function configProblems(config: WarrantConfig, facts: ConfigFacts): ConfigProblem[] {
  return [...listingProblems(config, facts), ...reviewProblems(config, facts), ...modelProblems(config, facts)];
}

function error_(path: string, message: string): ConfigProblem {
  return { path, message, severity: "error" };
}

function propertiesOf(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = schema["properties"];
  return typeof properties === "object" && properties !== null && !Array.isArray(properties)
    ? (properties as Record<string, unknown>)
    : {};
}

/**
 * Contracts against what their servers list: the tool exists, and the
 * arguments the contract binds to the run or checks as a resource are in the
 * schema the model sees (injected arguments are not: the host removes them).
 */
function listingProblems(config: WarrantConfig, facts: ConfigFacts): ConfigProblem[] {
  const listed = facts.listed;
  if (listed === undefined) return [];
  const problems: ConfigProblem[] = [];
  for (const server of Object.keys(config.servers)) {
    const listing = Object.hasOwn(listed, server) ? listed[server] : undefined;
    if (listing !== undefined && !Array.isArray(listing)) {
      const reason = (listing as { error: string }).error;
      problems.push({
        path: `servers.${server}`,
        message: `could not be listed (${reason}); its contracts are not checked against its tools`,
        severity: "warning",
      });
    }
  }
  for (const [name, contract] of Object.entries(config.tools)) {
    const listing = Object.hasOwn(listed, contract.server) ? listed[contract.server] : undefined;
    if (!Array.isArray(listing)) continue;
    const remote = contract.remote_name ?? name;
    const tool = (listing as readonly ListedToolFacts[]).find((item) => item.name === remote);
    if (!tool) {
      problems.push(error_(`tools.${name}`, `server "${contract.server}" lists no tool "${remote}"`));
      continue;
    }
    const properties = propertiesOf(tool.inputSchema);
    const lacks = (argument: string) => !Object.hasOwn(properties, argument);
    for (const argument of Object.keys(contract.run_bound))
      if (lacks(argument))
        problems.push(error_(`tools.${name}.run_bound.${argument}`, `the tool's input schema has no "${argument}"`));
    if (contract.resource && lacks(contract.resource.argument))
      problems.push(
        error_(`tools.${name}.resource.argument`, `the tool's input schema has no "${contract.resource.argument}"`),
      );
  }
  return problems;
}

/**
 * A review rule no one could satisfy: a principal who may call a tool of that
 * risk, with no one in the directory allowed to decide its review (four eyes
 * with no other reviewer of the tenant). Such a call would wait until it expires.
 */
function reviewProblems(config: WarrantConfig, facts: ConfigFacts): ConfigProblem[] {
  const principals = facts.principals;
  if (principals === undefined) return [];
  const problems: ConfigProblem[] = [];
  for (const risk of RISKS) {
    const rule = config.review_policy[risk];
    if (rule === "none") continue;
    const tools = Object.entries(config.tools).filter(([, contract]) => contract.risk === risk);
    const stranded = new Set<string>();
    for (const owner of principals) {
      const callable = tools.filter(([, contract]) => hasScopes(owner, contract));
      if (callable.length === 0) continue;
      if (principals.some((approver) => mayDecide(approver, owner, rule))) continue;
      stranded.add(`${owner.user_id} (tenant ${owner.tenant}: ${callable.map(([name]) => name).join(", ")})`);
    }
    if (stranded.size > 0)
      problems.push(
        error_(
          `review_policy.${risk}`,
          `"${rule}" cannot be satisfied for ${[...stranded].join("; ")}: no ${
            rule === "reviewer_not_owner" ? "other " : ""
          }principal of the tenant holds ${REVIEWER_SCOPE}`,
        ),
      );
  }
  return problems;
}

function modelProblems(config: WarrantConfig, facts: ConfigFacts): ConfigProblem[] {
  const model = facts.model;
  if (model === undefined || model.planner !== "model" || Object.hasOwn(config.models, model.name)) return [];
  // A warning, not an error: an endpoint of one's own may really cost nothing.
  return [
    {
      path: `models.${model.name}`,
      message: `no price for the configured model "${model.name}": its runs count as free against the cost budget`,
      severity: "warning",
    },
  ];
}

/** One line a problem prints as: `error tools.x.y: message`. */
export function formatProblem(problem: ConfigProblem, source: string): string {
  return `${problem.severity} ${source}: ${problem.path} ${problem.message}`;
}
