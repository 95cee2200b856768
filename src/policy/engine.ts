/**
 * The policy decision point behind the `authorized` check: one request
 * (who, which tool, what resource, in what context) and one answer, allow
 * or a refusal with its typed code. The built-in engine is the contracts'
 * scopes and resource rules over the principal's grants; the Cedar engine
 * (`cedar.ts`) evaluates policy files instead. `policy.engine` in
 * warrant.config.json chooses; the default is the built-in one.
 */
import type { Principal } from "../auth/principal.js";
import { mayDecide } from "./approval.js";
import { ACCESS_DENIED_MESSAGE, hasScopes, resourceAllowed } from "./authorization.js";
import type { CatalogTool } from "./contracts.js";
import type { ReviewRule, Stage } from "./decision.js";
import type { EngineError, EngineName } from "./engine-errors.js";

/** One authorization request: everything here comes from the host, never from the model's claims. */
export interface AuthorizationRequest {
  principal: Principal;
  tool: CatalogTool;
  /** The validated model-visible arguments. */
  args: Record<string, unknown>;
  /** Where in the pipeline the call is checked. */
  stage: Stage;
  /** The run's counters as they stand (propose and edit stages; 0 at execute, which checks none). */
  run: { budgetLeft: number; repeats: number };
  /** Milliseconds since the epoch. */
  now: number;
  /** Whether a reviewer has approved this version (an edit being re-checked, an approved call at execute). */
  reviewed: boolean;
}

export type AuthorizationAnswer =
  | { allow: true; policies?: string[] }
  | {
      allow: false;
      code: "tool_not_permitted" | "access_denied";
      message: string;
      withheld?: string;
      /** The policies that decided (Cedar: the determining forbid policies; empty for a default deny). */
      policies?: string[];
      engineError?: EngineError;
    };

/**
 * Who may answer a review: the approver (from the authenticated request, never its body) deciding an action
 * the run's owner asked for, under the review policy's rule for its risk.
 */
export interface ApproveRequest {
  approver: Principal;
  /** The run's owner, as the directory has them now. */
  owner: Principal;
  tool: string;
  rule: ReviewRule;
  now: number;
}

export type ApproveAnswer =
  | { allow: true; policies?: string[] }
  | { allow: false; policies: string[]; engineError?: EngineError; detail?: string };

export interface PolicyEngine {
  readonly name: EngineName;
  authorize(request: AuthorizationRequest): AuthorizationAnswer;
  /** Whether the approver may decide the review (the built-in engine: the review policy's rule, `mayDecide`). */
  approve(request: ApproveRequest): ApproveAnswer;
}

/** The review policy's rule as it always was: the owner or a reviewer of the tenant; four eyes for irreversible writes. */
export function builtinApprove({ approver, owner, rule }: ApproveRequest): ApproveAnswer {
  return mayDecide(approver, owner, rule) ? { allow: true } : { allow: false, policies: [] };
}

/** The contracts' scopes, then their resource rule (the order `authorized` always had). */
export const builtinEngine: PolicyEngine = {
  name: "builtin",
  authorize({ principal, tool, args }) {
    if (!hasScopes(principal, tool.contract))
      return {
        allow: false,
        code: "tool_not_permitted",
        message: `${tool.name} is not available to you`,
        withheld: "scope",
      };
    if (!resourceAllowed(tool.contract, args, principal))
      return { allow: false, code: "access_denied", message: ACCESS_DENIED_MESSAGE };
    return { allow: true };
  },
  approve: builtinApprove,
};
