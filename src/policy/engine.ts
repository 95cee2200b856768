/**
 * The policy decision point behind the `authorized` check: one request
 * (who, which tool, what resource, in what context) and one answer, allow
 * or a refusal with its typed code. The built-in engine is the contracts'
 * scopes and resource rules over the principal's grants; the Cedar engine
 * (`cedar.ts`) evaluates policy files instead. `policy.engine` in
 * warrant.config.json chooses; the default is the built-in one.
 */
import type { Principal } from "../auth/principal.js";
import { ACCESS_DENIED_MESSAGE, hasScopes, resourceAllowed } from "./authorization.js";
import type { CatalogTool } from "./contracts.js";
import type { Stage } from "./decision.js";
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

export interface PolicyEngine {
  readonly name: EngineName;
  authorize(request: AuthorizationRequest): AuthorizationAnswer;
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
};
