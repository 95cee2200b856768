/**
 * Who may call what: for each principal and stage, the tools the effective
 * set would offer, the ones it withholds and why, and who must approve each
 * offered write. Pure: the same `effectiveTools` and review rules the run
 * uses, with every server taken as healthy and no relevance narrowing (that
 * depends on each request).
 */
import type { Principal } from "../auth/principal.js";
import { mayDecide } from "./approval.js";
import type { ReviewPolicy } from "./config.js";
import type { CatalogTool } from "./contracts.js";
import { reviewRuleFor } from "./decide.js";
import { effectiveTools, type EffectiveTools } from "./effective-tools.js";
import type { PolicyEngine } from "./engine.js";
import type { OidcConfig } from "../auth/oidc-config.js";

export interface MatrixReview {
  tool: string;
  rule: "owner_or_reviewer" | "reviewer_not_owner";
  /** Who of the directory may decide it for this principal (the owner included where the rule lets them). */
  deciders: string[];
}

export interface MatrixRow {
  principal: string;
  role: string;
  tenant: string;
  stage: string;
  offered: string[];
  /** Why each tool is withheld: the effective set's reason, or `policy: <ids>` when the Cedar engine refuses it. */
  withheld: { tool: string; reason: EffectiveTools["withheld"][number]["reason"] | `policy: ${string}` }[];
  review: MatrixReview[];
}

/** The stages to show: every stage a contract names, and the stage runs use. */
export function stagesOf(tools: readonly CatalogTool[], runStage: string): string[] {
  const named = tools.flatMap((tool) => tool.contract.stages).filter((stage) => stage !== "any");
  return [...new Set([runStage, ...named])].sort();
}

export function policyMatrix(input: {
  tools: readonly CatalogTool[];
  principals: readonly Principal[];
  reviewPolicy: ReviewPolicy;
  stages: readonly string[];
  /**
   * A policy language engine (Cedar): a tool it refuses to the principal with no resource named
   * (`tool_not_permitted`) is withheld as `policy: <ids>`. Rules on arguments, time or resources are per call.
   */
  engine?: PolicyEngine;
  now?: number;
}): MatrixRow[] {
  const rows: MatrixRow[] = [];
  for (const principal of input.principals) {
    for (const stage of input.stages) {
      const offer = effectiveTools({
        tools: input.tools,
        principal,
        stage,
        allowedRisks: ["read", "write_reversible", "write_irreversible"],
        isHealthy: () => true,
        maxTools: Number.POSITIVE_INFINITY,
        request: "",
      });
      const withheld: MatrixRow["withheld"] = [...offer.withheld];
      const offered = offer.offered.filter((tool) => {
        if (!input.engine) return true;
        const answer = input.engine.authorize({
          principal,
          tool,
          args: {},
          stage: "propose",
          run: { budgetLeft: 1, repeats: 0 },
          now: input.now ?? Date.now(),
          reviewed: false,
        });
        if (answer.allow || answer.code !== "tool_not_permitted") return true;
        withheld.push({ tool: tool.name, reason: `policy: ${(answer.policies ?? []).join(", ") || "default deny"}` });
        return false;
      });
      const review: MatrixReview[] = [];
      for (const tool of offered) {
        const rule = reviewRuleFor(tool, input.reviewPolicy);
        if (rule === null) continue;
        const deciders = input.principals
          .filter((approver) => mayDecide(approver, principal, rule))
          .map((approver) => approver.user_id);
        review.push({ tool: tool.name, rule, deciders });
      }
      rows.push({
        principal: principal.user_id,
        role: principal.role,
        tenant: principal.tenant,
        stage,
        offered: offered.map((tool) => tool.name),
        withheld,
        review,
      });
    }
  }
  return rows;
}

/** The matrix as a plain-text table: one line per principal and stage. */
export function renderMatrix(rows: readonly MatrixRow[]): string {
  const lines: string[] = [];
  for (const row of rows) {
    lines.push(`${row.principal} (${row.role}, tenant ${row.tenant}) · stage ${row.stage}`);
    const reviewOf = new Map(row.review.map((entry) => [entry.tool, entry]));
    for (const tool of row.offered) {
      const review = reviewOf.get(tool);
      const note = review
        ? `review: ${review.rule} by ${review.deciders.length > 0 ? review.deciders.join(", ") : "NO ONE"}`
        : "no review";
      lines.push(`  offered   ${tool.padEnd(28)} ${note}`);
    }
    for (const entry of row.withheld) lines.push(`  withheld  ${entry.tool.padEnd(28)} ${entry.reason}`);
    lines.push("");
  }
  return lines.join("\n");
}

/**
 * One stand-in principal per group (or role) an identity provider's mapping
 * names, so the matrix shows what each mapped group may do: named
 * `<group>@<issuer host>`, with the group's role, scopes and grants, in the
 * issuer's fixed tenant (or `<claim>` when the tenant comes from a claim).
 * A user in several groups holds the union; the matrix shows each alone.
 */
export function mappedGroupPrincipals(oidc: OidcConfig | undefined): Principal[] {
  return (oidc?.issuers ?? []).flatMap((issuer) => {
    const host = new URL(issuer.issuer).host;
    const tenant = "fixed" in issuer.tenant ? issuer.tenant.fixed : `<${issuer.tenant.claim}>`;
    const entries = Object.entries(issuer.groups).map(([group, mapping]) => [group, mapping] as const);
    if (issuer.default) entries.push(["(no mapped group)", issuer.default]);
    return entries.map(([group, mapping]) => ({
      user_id: `${group}@${host}`,
      tenant,
      role: mapping.operator ? `${mapping.role} (operator commands)` : mapping.role,
      scopes: [...mapping.scopes],
      grants: mapping.grants,
    }));
  });
}
