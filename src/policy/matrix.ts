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
import type { OidcConfig } from "./oidc-config.js";

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
  withheld: EffectiveTools["withheld"];
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
      const review: MatrixReview[] = [];
      for (const tool of offer.offered) {
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
        offered: offer.offered.map((tool) => tool.name),
        withheld: offer.withheld,
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
